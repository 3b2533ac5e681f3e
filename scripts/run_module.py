"""``python run_module.py -m MODULE ARGS...`` runs MODULE like ``python -m`` would, and
``-c CODE ARGS...`` runs CODE, both with the plugin's ``src/`` first on sys.path and
without the current directory: ``-m`` would put the user's project first, so a
``yaml.py`` there would be imported in maker's place (and run). Nothing goes through
PYTHONPATH, which every command maker runs (the user's verification commands) would
inherit."""

import os
import runpy
import sys

if __name__ == "__main__":
    # sys.path[0] is this script's folder; maker's src/ takes its place.
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[0] = os.path.join(os.path.dirname(here), "src")
    if len(sys.argv) < 3 or sys.argv[1] not in ("-m", "-c"):
        sys.exit("usage: launch -m MODULE [ARGS...] | launch -c CODE [ARGS...]")
    if sys.version_info < (3, 10):
        sys.exit(f"maker: {sys.executable} is Python {sys.version.split()[0]}; maker needs "
                 "3.10 or newer. Point MAKER_PYTHON at one (or unset it to let maker find "
                 "one).")
    missing = []
    for module in ("yaml", "click"):
        try:
            __import__(module)
        except ImportError:
            missing.append({"yaml": "PyYAML"}.get(module, module))
    if missing:
        sys.exit(f"maker: {sys.executable} has no {' or '.join(missing)}. Install them "
                 f"into it ({sys.executable} -m pip install {' '.join(missing)}), point "
                 "MAKER_PYTHON at a Python that has them, or unset MAKER_PYTHON to let "
                 "maker set one up.")
    flag, target, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    if flag == "-c":
        sys.argv = ["-c", *rest]
        exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = [target, *rest]
        runpy.run_module(target, run_name="__main__", alter_sys=True)
