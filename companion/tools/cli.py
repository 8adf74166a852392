"""Command line: ``python -m companion {list, coverage, run, reproduce, robustness, precompute, solutions, sync, translate, cache,
bench, book, slides, launch}``.

* ``list`` — the chapter map and which notebooks exist;
* ``coverage [--missing] [--write-readme] [--json]`` — how faithfully the book's figures are reproduced, per chapter
  (computed by :mod:`companion.tools.fidelity`); ``--write-readme`` regenerates the README's chapter map; ``--json`` prints every figure's computed
  fidelity (:mod:`companion.tools.fidelity`);
* ``run ch04`` — execute one chapter headless and print its claims; ``--profile full --smoke`` runs the full
  profile's code paths with every step count cut to a few recording intervals (claims shown, not judged); its
  notebook, figures and page go to a folder of their own, ``reproduced/runs/<chapter>-seed<N>-<profile>/`` (or
  ``--out``), so that a run never overwrites what ``reproduce`` wrote;
* ``reproduce [--jobs N]`` — execute every chapter (quick profile by default; N chapters at once), write the
  executed notebooks,
  their figures (named after the book's, e.g. ``reproduced/ch04_frequency_principle/fig4.7.png``) and the
  report page ``reproduced/index.html`` to ``--out`` and print the claims report; exit status 1 if any claim failed
  or any notebook raised;
* ``robustness --seeds 0-19 [--chapters ch04,ch07] [--jobs N]`` — every chapter × seed, the claims'
  pass counts and margins, merged into ``robustness/report.json`` (a report it cannot merge into is refused, never
  replaced); exit status 1 below the standard;
  ``--restamp --seeds 0,1`` carries the report over a claim-neutral change after checking a sample of seeds;
  ``--backend dask [--scheduler ADDRESS]`` runs them on a Dask cluster (see docs/cluster.md);
* ``solutions [ch04 …] [--stale]`` — run each worked solution's code once in its notebook and keep what it prints
  and draws under ``solution_results/`` for the book site (:mod:`companion.tools.worked`)
* ``precompute [ch04 …]`` — sample each chapter's explorer on its grid for the site's kernel-free explorers
  (pictures and ``grid.json`` under ``explorers/``; an interrupted run resumes); ``--check`` after a code change
  computes and draws every point again and writes anew those whose result or picture moved;
* ``sync ch04`` — rebuild a chapter's committed .ipynb from its .py and execute it (seed 0); ``--text-only`` carries
  a markdown change and keeps the committed outputs;
* ``cache info`` — what the results cache holds, per function module: results made by the current code
  and torch, and outdated ones; ``cache clear [--outdated]`` deletes it (or only the outdated folders);
* ``translate [ch04 …] [--update]`` — check the Chinese edition against the English source (exit status 1 when
  a cell or text has no translation or its English changed); ``--update`` adds what is missing as todo entries;
* ``bench`` — run the timing scripts of ``benchmarks/``;
* ``book [--pdf]`` — build the book site from the committed notebooks into ``book/_build/html``; ``--repository URL``
  gives it a repository link and launch buttons (:mod:`companion.tools.launch`); ``--pdf`` also prints each edition,
  worked solutions open, to ``book/_build/pdf/companion-en.pdf`` and ``companion-zh.pdf``;
* ``slides ch10 [--lang zh]`` — write a chapter's lecture slides, an offline reveal.js deck with its figures, their
  claims' verdicts and its kernel-free explorer, to ``slides/<chapter>/index.html``;
* ``launch --repository URL [--jupyterhub URL]`` — the one setting of the launch buttons: writes the repository's
  address into ``book/_config.yml`` and into every chapter's install cell (the first code cell, which installs the
  companion on Colab or a JupyterHub); without ``--repository`` it writes the configuration's address into the cells
  (:mod:`companion.tools.launch`).
"""

from __future__ import annotations

import argparse
import json
import re
import runpy
import signal
import sys
import threading
from pathlib import Path

from companion.tools import catalog
from companion.kit.config import ConfigError, read_profile, read_seed, read_smoke, reset_settings, settings
from companion.kit.i18n import read_language, tr
from companion.tools.reproduction import write_index
from companion.tools.runner import (NotAResult, format_report, read_budget, read_jobs, read_timeout, run_chapters,
                                   sync_notebook, sync_text)

#: The longest run of characters an error line shows of one value (a longer one is cut in the middle): long enough
#: for a file's path, which the reader needs whole (the values themselves are shortened where they are named,
#: :func:`companion.kit.config.shown`; this is the net under every other message).
LONGEST_VALUE = 400


class Terminated(KeyboardInterrupt):
    """SIGTERM (``timeout``, a CI cancel), raised like Ctrl-C so that it ends the same clean way (exit 143)."""


def shorten(message: str, longest: int = LONGEST_VALUE) -> str:
    """``message`` with each run of more than ``longest`` non-blank characters (a value someone passed: 5,000 digits,
    a 100 KB environment value) cut to its ends and its length."""
    def cut(match: re.Match) -> str:
        text = match.group()
        return f"{text[:longest // 2]}…[{len(text)} characters]…{text[-8:]}"
    return re.sub(rf"\S{{{longest + 1},}}", cut, message)


def error(message: object) -> None:
    """Print one error line (long values shortened, :func:`shorten`) on stderr."""
    print(f"error: {shorten(str(message))}", file=sys.stderr)


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def sigterm_as_interrupt() -> object:
    """Make SIGTERM raise :class:`Terminated` (in the main thread only, where signals are handled); returns the
    handler it replaced, for :func:`restore_sigterm`."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _terminate)


def restore_sigterm(previous: object) -> None:
    """Put back the SIGTERM handler :func:`sigterm_as_interrupt` replaced."""
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def _list(_args: argparse.Namespace) -> int:
    print(f"{'notebook':28} {'book ch.':8} {'status':8} title / figures checked by a claim")
    for ch in catalog.CHAPTERS:
        status = "ready" if ch.available else "missing"
        print(f"{ch.slug:28} {ch.book:8} {status:8} {ch.title} ({ch.title_zh})")
        print(f"{'':46} {', '.join(ch.claimed) or '—'}")
    return 0


def _launch(args: argparse.Namespace) -> int:
    """``launch``: the repository's address into the book's configuration (when given) and every chapter's install
    cell; one line per file it changed."""
    import yaml

    from companion.tools import launch, site

    config_file = site.BOOK_DIR / "_config.yml"
    if args.repository is not None or args.jupyterhub is not None:
        repository = args.repository if args.repository is not None else \
            (yaml.safe_load(config_file.read_text(encoding="utf-8"))["repository"].get("url") or "")
        launch.set_repository(config_file, repository, args.jupyterhub)
        print(f"wrote {config_file}", flush=True)
    url = yaml.safe_load(config_file.read_text(encoding="utf-8"))["repository"].get("url") or ""
    changed = launch.write_install_cells(catalog.sources(), url)
    for path in changed:
        print(f"wrote {path}", flush=True)
    print(f"every chapter's install cell names {url or 'no repository (it installs from a clone only)'}"
          + ("" if changed else "; nothing changed"))
    return 0


def _coverage(args: argparse.Namespace) -> int:
    from companion.tools import fidelity

    items = fidelity.fidelities(check_stale=args.json)
    if args.json:
        print(json.dumps([item.record() for item in items], ensure_ascii=False, indent=1))
        return 0
    if args.write_readme:
        print(f"wrote the chapter map into {fidelity.write_readme_map()}")
        return 0
    print(f"{'book ch.':8} {'CPU':>4} {'faithful':>8} {'full':>4} {'partial':>7} {'drawn':>5} {'missing':>7} {'%':>4}")
    for n in [*catalog.book_chapters(), "all"]:
        c = fidelity.counts([i for i in items if n == "all" or i.chapter == n])
        k = c.by_fidelity
        print(f"{n!s:8} {c.cpu_feasible:4} {c.faithful:8} {k['faithful-full']:4} {k['partial']:7} {k['drawn']:5} "
              f"{k['missing']:7} {c.percent:4.0f}")
    print("\nfaithful: a phenomenon claim tests the figure's central statement, holds on ≥ 19/20 seeds and has a negative "
          "control from the book's contrast (python -m companion coverage --json says why for every other figure)")
    if args.missing:
        print("\nfit a CPU, not faithfully reproduced yet:")
        for item in items:
            if item.fidelity in ("partial", "drawn", "missing", "faithful-full") and item.same_as is None:
                print(f"  {item.figure:7} {item.fidelity:13} {item.why}")
    return 0


def out_option(path: str) -> Path:
    """``--out`` as a path; an empty one (which would mean the current folder) is a ConfigError."""
    if not str(path).strip():
        raise ConfigError("--out must name a folder, got ''")
    return Path(path)


def writable_folder(path: str) -> Path:
    """``--out``: a folder that exists (made if needed) and can be written, or a ConfigError naming it — checked
    before any work starts, so that no result is lost at the end."""
    out = out_option(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / ".write-test").touch()
        (out / ".write-test").unlink()
    except OSError as exc:
        raise ConfigError(f"cannot write to the output folder --out {str(out)!r} ({exc.strerror}); "
                          "give a folder you can write to") from None
    return out


def run_folder(args: argparse.Namespace, chapters: list[catalog.Chapter]) -> str:
    """Where ``run``/``reproduce`` write: ``--out`` if given; else ``reproduced`` for ``reproduce`` and, for ``run``,
    a folder of its own under ``reproduced/runs/`` named after the chapter, seed and profile, so that a run never
    replaces the page and notebooks of a ``reproduce``."""
    if args.out is not None:
        return args.out
    if args.command == "reproduce":
        return "reproduced"
    smoke = "-smoke" if args.smoke else ""
    return str(Path("reproduced") / "runs" / f"{chapters[0].short}-seed{args.seed}-{args.profile}{smoke}")


def _run(args: argparse.Namespace, chapters: list[catalog.Chapter]) -> int:
    language = read_language(args.lang)  # every option is checked before the output folder is made
    jobs, timeout = read_jobs(getattr(args, "jobs", "1")), read_timeout(args.timeout)
    out = writable_folder(run_folder(args, chapters))
    ready = [ch for ch in chapters if ch.available]
    for ch in chapters:
        if not ch.available:
            print(f"skipping {ch.slug}: its notebook is not written yet", file=sys.stderr)
    runs = run_chapters(ready, out, profile=args.profile, seed=args.seed, timeout=timeout, jobs=jobs,
                        language=language, smoke=args.smoke)
    print()
    print(format_report(runs, language))
    if runs:
        profile = f"{args.profile} (smoke)" if args.smoke else args.profile
        print(f"\n{tr('report with figures:', language)} {write_index(runs, out, profile, args.seed, language)}")
    return 0 if runs and all(r.ok for r in runs) else 1


def read_chapter_list(text: str | None) -> list[catalog.Chapter]:
    """``--chapters``: comma-separated slugs or prefixes (None: every chapter with a notebook); an empty list
    (``""``, ``","``) is an error, not every chapter."""
    if text is None:
        return catalog.available()
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ConfigError(f"--chapters {text!r} names no chapter: give e.g. ch04,ch07, or leave it out for every chapter")
    return list(dict.fromkeys(catalog.find(n) for n in names))


def _robustness(args: argparse.Namespace) -> int:
    from companion.tools import robustness

    seeds = robustness.parse_seeds(args.seeds)
    jobs, timeout = read_jobs(args.jobs), read_timeout(args.timeout)
    chapters = read_chapter_list(args.chapters)
    out = out_option(args.out) if args.out is not None else robustness.REPORT_DIR
    profile = read_profile(args.profile or "quick")
    budget = read_budget(args.budget)
    if args.merge:
        report = robustness.merge_reports([Path(p) for p in args.merge], out, profile=profile)
    elif args.restamp:
        differences = robustness.restamp(chapters, seeds, out=out, jobs=jobs, timeout=timeout, profile=profile)
        for slug, found in differences.items():
            print(f"{slug}: " + ("restamped: every claim as in the report" if not found else
                                 "still stale, the claims changed:\n  " + "\n  ".join(found[:20])))
        if not differences:
            print("nothing to restamp: no chapter's code changed since the report")
        made_on = (robustness.read_report(robustness.report_path(out, profile)) or {}).get("machine", "")
        if any(differences.values()) and made_on != robustness.machine_words():
            print(f"note: the report was made on {made_on or 'an unnamed machine'}, this is "
                  f"{robustness.machine_words()}: another processor or instruction set changes the last bits of a "
                  "sum, which training can grow into a margin's difference; such a chapter needs its full sweep here")
        return 0 if not any(differences.values()) else 1
    else:
        from companion.kit.cache import parallel_backend

        with parallel_backend(args.backend, args.scheduler) as client:
            if client is not None:
                print(f"sweeping on the dask cluster {client.scheduler.address} "
                      f"({len(client.scheduler_info()['workers'])} workers)", flush=True)
            report = robustness.robustness(chapters, seeds, jobs=-1 if client is not None else jobs, out=out,
                                           profile=profile, timeout=timeout, cached_only=args.cached_only,
                                           budget=budget, missing=args.missing)
    print(robustness.format_summary(report))
    print(f"\nreport: {robustness.report_path(out, profile)}")
    return 0 if robustness.meets_standard(report) else 1


def _cache(args: argparse.Namespace) -> int:
    from companion.kit import cache

    location = cache.cache_location()
    if location is None:
        print("the results cache is off (COMPANION_CACHE=off)")
        return 0
    if args.action == "clear":
        gone = cache.clear(outdated_only=args.outdated)
        print(f"deleted {sum(f.entries for f in gone)} results ({sum(f.bytes for f in gone) / 1e6:.1f} MB) "
              f"in {len(gone)} folders of {location}")
        return 0
    found = cache.folders()
    print(f"results cache: {location}" + ("" if found else " (empty)"))
    status = {True: "current", False: "outdated", None: "unknown"}
    for f in found:
        print(f"  {f.entries:6} results {f.bytes / 1e6:8.1f} MB  {status[f.current]:8}  {f.name}")
    for state in (True, False, None):
        part = [f for f in found if f.current is state]
        if part:
            print(f"{status[state]:>10}: {sum(f.entries for f in part)} results, "
                  f"{sum(f.bytes for f in part) / 1e6:.1f} MB")
    return 0


def _translate(args: argparse.Namespace) -> int:
    from companion.tools import translate

    special = (translate.COMMON, translate.CATALOG, translate.FIGURES)
    names = [n if n in special else catalog.find(n).slug for n in args.chapter] if args.chapter else translate.names()
    found = []
    for name in names:
        if args.update:
            if name != translate.FIGURES:
                print(f"updated {translate.update(name)}")
        found += translate.problems(name)
    print("\n".join(found) if found else f"the Chinese edition of {len(names)} file(s) is complete and in step")
    return 1 if found else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="show the chapter map")
    p = sub.add_parser("coverage", help="how faithfully the book's figures are reproduced, per chapter (computed)")
    p.add_argument("--missing", action="store_true", help="also list the CPU-feasible figures not faithfully "
                                                          "reproduced, and why")
    p.add_argument("--write-readme", action="store_true", help="rewrite the README's chapter map from the catalog")
    p.add_argument("--json", action="store_true", help="print every figure's computed fidelity as JSON (one object a "
                                                       "figure or table: figure, chapter, kind, fidelity, claims, why)")
    for name, helptext in (("run", "execute one chapter headless"), ("reproduce", "execute every chapter")):
        p = sub.add_parser(name, help=helptext)
        if name == "run":
            p.add_argument("chapter", help="chapter slug or prefix, e.g. ch04")
        p.add_argument("--profile", default=None, help="quick (default) or full; default from COMPANION_PROFILE")
        p.add_argument("--seed", default=None, help="default from COMPANION_SEED, else 0")
        p.add_argument("--smoke", action="store_const", const=True, default=None,
                       help="with --profile full: cut every step count to a few recording intervals, so that the full "
                            "profile's code paths run on a CPU in seconds; claims are shown, not judged (default from "
                            "COMPANION_SMOKE)")
        p.add_argument("--out", default=None, help="output folder (default: ./reproduced for reproduce, "
                                                   "./reproduced/runs/<chapter>-seed<N>-<profile> for run)")
        p.add_argument("--timeout", default="900", help="seconds allowed per cell (1 to 86400, default 900)")
        p.add_argument("--lang", default=None, help="en or zh: the language of the claims and the report (default from "
                                                    "COMPANION_LANG, else en)")
        if name == "reproduce":
            p.add_argument("--jobs", default="1", help="chapters run at once, each with cores/jobs torch threads "
                                                       "(default 1)")
    p = sub.add_parser("robustness", help="run chapters × seeds and report every claim's pass count and margin")
    p.add_argument("--seeds", default="0-19", help="seeds, e.g. 0-19 or 0,3,5-7 (default 0-19)")
    p.add_argument("--chapters", default=None, help="comma-separated slugs or prefixes (default: every chapter)")
    p.add_argument("--jobs", default="1", help="parallel runs (default 1; each run uses one torch thread when > 1, and always in the full "
                   "profile on a machine without CUDA, unless COMPANION_THREADS says otherwise)")
    p.add_argument("--out", default=None, help="report folder (default: robustness/ in the repository); an existing "
                                               "report there is merged into, or the run is refused")
    p.add_argument("--timeout", default="900", help="seconds allowed per cell (1 to 86400, default 900)")
    p.add_argument("--merge", nargs="+", metavar="REPORT", default=None,
                   help="run nothing: merge these report folders (e.g. one per machine) into --out")
    p.add_argument("--cached-only", action="store_true",
                   help="run nothing: report the runs the cache holds for the current code (a stopped sweep)")
    p.add_argument("--backend", default="local", help="local (default) or dask: run the chapters × seeds on a "
                                                      "dask.distributed cluster")
    p.add_argument("--scheduler", default=None, help="with --backend dask: the scheduler's address, e.g. "
                                                     "tcp://10.0.0.5:8786 (default: a local cluster of 2 processes)")
    p.add_argument("--restamp", action="store_true",
                   help="after a change meant not to touch any claim: rerun the stale chapters on --seeds (a sample, "
                        "e.g. 0,1) and, where every verdict and margin equal the report's, move their digests")
    p.add_argument("--profile", default=None, help="quick (default: robustness/report.json) or full (the book's "
                                                   "scale: robustness/report-full.json)")
    p.add_argument("--budget", default=None, help="seconds: start no run after that long and write the report after "
                                                  "every finished run (one device window's share)")
    p.add_argument("--missing", action="store_true",
                   help="run only the chapter × seed runs the report lacks for the current code")
    p = sub.add_parser("precompute", help="sample the chapters' explorers on their grids for the book site")
    p.add_argument("chapter", nargs="*", help="chapter slug(s) or prefix(es) (default: every chapter with a grid)")
    p.add_argument("--check", action="store_true",
                   help="compute and draw every committed point again, write anew those whose result or picture "
                        "changed, and record the code checked against")
    p = sub.add_parser("solutions", help="run the worked solutions' code once in their notebooks and keep their "
                                         "outputs for the book site")
    p.add_argument("chapter", nargs="*", help="chapter slug(s) or prefix(es) (default: every chapter with solutions)")
    p.add_argument("--stale", action="store_true", help="only the chapters whose kept outputs predate their code")
    p = sub.add_parser("sync", help="rebuild and execute a chapter's committed .ipynb from its .py")
    p.add_argument("chapter", nargs="+", help="chapter slug(s) or prefix(es)")
    p.add_argument("--text-only", action="store_true", help="carry a change of the markdown only, keeping every code "
                   "cell's committed outputs (refused when a code cell changed)")
    p = sub.add_parser("translate", help="check the Chinese edition against the English source, or update its files")
    p.add_argument("chapter", nargs="*", help="chapter slug(s) or prefix(es), common, catalog or figures (default: all)")
    p.add_argument("--update", action="store_true", help="rewrite the translation files: keep what matches, add "
                                                         "what is missing as todo entries holding the English")
    p = sub.add_parser("cache", help="show or clear the results cache")
    p.add_argument("action", choices=("info", "clear"), help="info: what it holds; clear: delete its entries (never other files)")
    p.add_argument("--outdated", action="store_true", help="with clear: only results of other code or torch")
    sub.add_parser("bench", help="run the benchmarks in benchmarks/")
    p = sub.add_parser("book", help="build the book site (Jupyter Book) from the committed notebooks")
    p.add_argument("--out", default=str(catalog.ROOT / "book"), help="the site goes to OUT/_build/html")
    p.add_argument("--repository", default=None, metavar="URL",
                   help="the repository's GitHub address (https://github.com/OWNER/REPO): every page links to it and "
                        "every chapter page gets launch buttons (Binder, Colab) that open its notebook there "
                        "(default: repository.url of book/_config.yml, empty: no buttons)")
    p.add_argument("--jupyterhub", default=None, metavar="URL",
                   help="a JupyterHub with nbgitpuller: a launch button for it too (with a repository)")
    p.add_argument("--pdf", action="store_true", help="also print each edition, worked solutions open, to "
                                                      "OUT/_build/pdf/companion-<en|zh>.pdf (headless Chromium)")
    p = sub.add_parser("slides", help="write a chapter's lecture slides (an offline reveal.js deck)")
    p.add_argument("chapter", help="chapter slug or prefix, e.g. ch10")
    p.add_argument("--out", default=None, help="the deck's folder (default: ./slides/<chapter>, ./slides/<chapter>-zh)")
    p.add_argument("--lang", default=None, help="en or zh (default from COMPANION_LANG, else en)")
    p = sub.add_parser("launch", help="set the repository the site's launch buttons and the chapters' install cells use")
    p.add_argument("--repository", default=None, metavar="URL",
                   help="the repository's GitHub address (https://github.com/OWNER/REPO), written into "
                        "book/_config.yml and every chapter's install cell (default: the configuration's)")
    p.add_argument("--jupyterhub", default=None, metavar="URL",
                   help="a JupyterHub with nbgitpuller, written into book/_config.yml (an empty string: none)")
    args = parser.parse_args(argv)
    previous = sigterm_as_interrupt()
    try:
        reset_settings()  # read them afresh: a bad COMPANION_PROFILE, _SEED, _THREADS or _LANG is named before any work
        settings()
        if args.command == "list":
            return _list(args)
        if args.command == "coverage":
            return _coverage(args)
        if args.command == "bench":
            for script in sorted((catalog.ROOT / "benchmarks").glob("*.py")):
                print(f"== {script.name}")
                runpy.run_path(str(script), run_name="__main__")
            return 0
        if args.command == "book":
            from companion.tools.site import build

            if args.repository:
                from companion.tools import launch

                named = launch.cells_repositories(catalog.sources())
                if named != {launch.check_repository(args.repository)}:
                    where = "name no repository, so on Colab a chapter stops at its first cell" if named == {""} else \
                        f"install the companion from {', '.join(sorted(named))}"
                    print(f"warning: the chapters' install cells {where}; `python -m companion launch --repository "
                          f"{args.repository}` writes this address into them", file=sys.stderr)
            try:
                html = build(writable_folder(args.out), repository=args.repository, jupyterhub=args.jupyterhub)
                print(f"built {html / 'index.html'}")
                if args.pdf:
                    from companion.tools.pdf import book_pdfs

                    for path in book_pdfs(html, html.parent / "pdf"):
                        print(f"printed {path}", flush=True)
            except RuntimeError as exc:  # the build's own output says what went wrong
                error(exc)
                return 1
            return 0
        if args.command == "slides":
            from companion.tools.slides import write_deck

            language, chapter = read_language(args.lang), catalog.find(args.chapter).slug  # checked before --out is made
            try:
                print(f"wrote {write_deck(chapter, args.out and writable_folder(args.out), language)}")
            except RuntimeError as exc:
                error(exc)
                return 1
            return 0
        if args.command == "launch":
            return _launch(args)
        if args.command == "robustness":
            return _robustness(args)
        if args.command == "cache":
            return _cache(args)
        if args.command == "translate":
            return _translate(args)
        if args.command == "precompute":
            from companion.tools import precompute

            for name in args.chapter or list(precompute.EXPLORERS):
                print(f"{'checked' if args.check else 'wrote'} {precompute.precompute(name, check=args.check)}",
                      flush=True)
            return 0
        if args.command == "solutions":
            from companion import solutions
            from companion.tools import worked

            names = [catalog.find(n).slug for n in args.chapter] or list(solutions.CHAPTERS)
            for name in worked.stale_chapters(names) if args.stale else names:
                try:
                    print(f"wrote {worked.compute(name)}", flush=True)
                except RuntimeError as exc:
                    error(exc)
                    return 1
            return 0
        if args.command == "sync":
            for name in args.chapter:
                source = catalog.find(name).source
                print(f"synced {sync_text(source) if args.text_only else sync_notebook(source)}", flush=True)
            return 0
        args.profile, args.seed = read_profile(args.profile), read_seed(args.seed)
        args.smoke = read_smoke(args.profile, args.smoke)
        chapters = [catalog.find(args.chapter)] if args.command == "run" else list(catalog.CHAPTERS)
        return _run(args, chapters)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM: one line, no traceback; the kernels are shut down
        print(f"interrupted: {shorten(str(exc)) or 'stopped before the end'}", file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130
    except (ConfigError, ValueError) as exc:
        error(exc)
        return 2
    except NotAResult as exc:  # a robustness run's kernel was killed or lacked the companion: the sweep stops, the
        # finished runs are cached
        error(exc)
        return 1
    finally:
        restore_sigterm(previous)


if __name__ == "__main__":
    sys.exit(main())
