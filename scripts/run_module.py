"""Run ``python run_module.py MODULE ARGS...`` like ``python -m MODULE ARGS...``, but
without the current directory on sys.path: ``-m`` would put the user's project
first, so a ``yaml.py`` there would be imported in maker's place (and run)."""

import runpy
import sys

if __name__ == "__main__":
    module = sys.argv[1]
    sys.argv = [module, *sys.argv[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
