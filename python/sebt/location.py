"""Where libsebt is: $SEBT_LIB, else the path the build or the install wrote
beside this package (libsebt_path.py, relative, so a moved prefix still
works), else the system's library search (libsebt.so.0)."""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def library_path():
    env = os.environ.get("SEBT_LIB")
    if env:
        # absolute, so that libsebt finds its shared files beside itself
        return os.path.abspath(env) if "/" in env else env
    try:
        from . import libsebt_path
    except ImportError:
        return "libsebt.so.0"
    p = os.path.normpath(os.path.join(_HERE, libsebt_path.RELATIVE))
    return p if os.path.exists(p) else "libsebt.so.0"
