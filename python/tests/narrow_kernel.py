#!/usr/bin/python3
"""A kernel on sebt_kernel.py written for the parameters named on its
command line (params=): sebt declaring others must be refused at the
handshake, naming both lists, and the kernel never computes anything.

    narrow_kernel.py NAME...
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sebt_kernel as sk  # noqa: E402


def never(*args):
    raise RuntimeError("narrow_kernel was asked to compute")


sys.exit(sk.serve("narrow", run_one=never, features=never, params=sys.argv[1:]))
