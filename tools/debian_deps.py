"""Imports a tool's third-party modules, or says in one line which Debian
package to install.

Debian's python3-* packages belong to /usr/bin/python3; another python3
earlier in PATH (pyenv, a venv, a conda base) does not see them, and a bare
import error there is a traceback that names neither the package nor the
interpreter. Every tool in tools/ that needs more than the standard library
imports through `require`.
"""
import importlib
import os
import sys

# Module -> the Debian package that provides it for /usr/bin/python3.
DEBIAN_PACKAGES = {
    "matplotlib": "python3-matplotlib",
    "numpy": "python3-numpy",
}


def require(module):
    """The imported module, or exit 2 with one line on stderr."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        package = DEBIAN_PACKAGES.get(top, f"python3-{top}")
        tool = os.path.splitext(os.path.basename(sys.argv[0]))[0]
        hint = "" if sys.executable == "/usr/bin/python3" else f"; or run it with /usr/bin/python3, not {sys.executable}"
        print(f"{tool}: error: needs the Python module '{top}': apt-get install {package}{hint}", file=sys.stderr)
        sys.exit(2)
