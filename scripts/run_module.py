"""``python -I -S run_module.py [--deps FILE] -m MODULE ARGS...`` runs MODULE like
``python -m`` would, and ``-c CODE ARGS...`` runs CODE, in an interpreter state that
the user's site-packages cannot slow down or break:

- ``-I -S`` (set by scripts/launch): no ``site`` at start, so no ``.pth`` file runs
  (one that imports ``certifi`` costs a hook 30 ms), no ``sitecustomize``, no user
  site-packages, no ``PYTHON*`` variables, and not the current directory (``-m``
  would put the user's project first, so a ``yaml.py`` there would be imported in
  maker's place, and run);
- sys.path is the standard library, then the plugin's ``src/``, then maker's own
  dependency folders: the lines after the first of FILE (scripts/bootstrap writes
  them: where that interpreter keeps PyYAML and click), added as plain folders;
- a dependency found in none of those (the SDK for ``maker run``, or PyYAML and
  click when no FILE names them, as with MAKER_PYTHON) is looked for again after
  ``site`` has run then, once, as a normal start would have done.

Nothing goes through PYTHONPATH, which every command maker runs (the user's
verification commands) would inherit."""

import os
import sys

# What maker imports from outside the standard library. Only these wake site: the
# standard library itself tries modules that are never there (``copy`` tries Jython's
# ``org``), and those must stay cheap misses.
_THIRD_PARTY = ("yaml", "click", "claude_agent_sdk")


class _LateSite:
    """A meta path finder, last in line: the first time one of maker's dependencies
    is not found, run ``site`` (as a normal start would have) and look again."""

    done = False

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if cls.done or name not in _THIRD_PARTY:
            return None
        cls.done = True
        import site
        from importlib.machinery import PathFinder

        site.main()
        return PathFinder.find_spec(name, None, target)


def _setup_path(deps_file):
    here = os.path.dirname(os.path.realpath(__file__))
    # Under -I the script's folder is not on sys.path: maker's src/ goes first (ahead
    # of the standard library too, as the script's folder would have).
    sys.path.insert(0, os.path.join(os.path.dirname(here), "src"))
    if deps_file:
        try:
            with open(deps_file, encoding="utf-8") as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            lines = []
        sys.path.extend(line for line in lines if line and os.path.isdir(line))
    if not sys.flags.no_site:  # run without -S (by hand): site has already run
        return
    sys.meta_path.append(_LateSite)


def _fail(hook, text):
    """Exit with ``text``; for a hook (``--hook EVENT``), as its systemMessage, exit 0."""
    if not hook:
        sys.exit(text)
    import json

    sys.stdout.write(json.dumps({"systemMessage": f"maker: the {hook} hook could not run: "
                                 f"{text} Nothing was blocked."}) + "\n")
    sys.exit(0)


def _run_main(name):
    """``runpy.run_module(name, run_name="__main__", alter_sys=True)`` for a package
    (its ``__main__`` submodule), as ``python -m`` runs it, without ``runpy``: its
    imports (``importlib.util``, ``contextlib``) cost every hook a millisecond or
    two. Anything else (a plain module, a namespace package, a loader without code)
    goes through ``runpy`` itself."""
    spec = _find(name, None)
    if spec is not None and spec.submodule_search_locations and spec.origin:
        __import__(name)  # a package is imported first, as runpy does
        spec = _find(name + ".__main__", sys.modules[name].__path__)
    else:
        spec = None
    main_name = name + ".__main__"
    code = spec.loader.get_code(main_name) if spec and hasattr(spec.loader, "get_code") \
        else None
    if code is None:
        import runpy

        runpy.run_module(name, run_name="__main__", alter_sys=True)
        return
    main = type(sys)("__main__")
    main.__dict__.update(__name__="__main__", __file__=spec.origin, __cached__=spec.cached,
                         __loader__=spec.loader, __package__=name, __spec__=spec)
    sys.argv[0] = spec.origin
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def _find(name, path):
    if "." in name and path is None:
        parent = name.rpartition(".")[0]
        __import__(parent)
        path = sys.modules[parent].__path__
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, path) if find else None
        if spec is not None:
            return spec
    return None


def main(args):
    deps = hook = None
    while len(args) >= 2 and args[0] in ("--deps", "--hook"):
        if args[0] == "--deps":
            deps = args[1]
        else:
            hook = args[1]
        args = args[2:]
    if len(args) < 2 or args[0] not in ("-m", "-c"):
        sys.exit("usage: launch -m MODULE [ARGS...] | launch -c CODE [ARGS...]")
    if sys.version_info < (3, 10):
        _fail(hook, f"maker: {sys.executable} is Python {sys.version.split()[0]}; maker "
              "needs 3.10 or newer. Point MAKER_PYTHON at one (or unset it to let maker "
              "find one).")
    _setup_path(deps)
    # Found, not imported: a hook imports only what its event needs.
    missing = [{"yaml": "PyYAML"}.get(name, name) for name in ("yaml", "click")
               if not any(finder.find_spec(name, None) for finder in sys.meta_path
                          if hasattr(finder, "find_spec"))]
    if missing:
        _fail(hook, f"maker: {sys.executable} has no {' or '.join(missing)}. Install them "
              f"into it ({sys.executable} -m pip install {' '.join(missing)}), point "
              "MAKER_PYTHON at a Python that has them, or unset MAKER_PYTHON to let maker "
              "set one up.")
    flag, target, rest = args[0], args[1], args[2:]
    try:
        if flag == "-c":
            sys.argv = ["-c", *rest]
            exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})
        else:
            sys.argv = [target, *rest]
            _run_main(target)
    except Exception as exc:
        if not hook:
            raise
        # maker could not even start (a broken install): said, never a traceback.
        _fail(hook, f"{type(exc).__name__}: {str(exc).strip()[:300]}.")


if __name__ == "__main__":
    main(sys.argv[1:])
