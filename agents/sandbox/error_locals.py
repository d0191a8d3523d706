"""How a Python block is started: as itself, or through a small bootstrap that, on an uncaught exception, prints the
traceback of the script's own frames and then the values of the variables where it failed.

A small model reads `ValueError: too many values to unpack (expected 5)` and guesses; shown `line = '10.0.0.9 - -
[12/Mar/2024:10:02:58 +0000] "GET /about HTTP/1.1" 200 675'` under it, it can see why. The bootstrap runs the file
as `__main__` itself (same `__name__`, `__file__`, `sys.argv`, `sys.path[0]` and line numbers as `python3 file.py`) and
needs nothing in the image, so it works with any python3.
"""

from __future__ import annotations

LOCALS_HEADER = "Variables where the error happened"
"""First line of the block the bootstrap prints under the traceback (feedback.error_line stops before it)."""

HOOK = r'''
def _codeduet_hook(etype, value, tb, _path=__import__("os").path.abspath(__import__("sys").argv[1])):
    import os, re, reprlib, sys, types
    own = tb
    while own is not None and own.tb_frame.f_code.co_filename != _path:
        own = own.tb_next
    sys.__excepthook__(etype, value.with_traceback(own), own)  # no frame of the script (a SyntaxError): as python3
    last = None
    while own is not None:
        if own.tb_frame.f_code.co_filename == _path:
            last = own
        own = own.tb_next
    if last is None or issubclass(etype, (KeyboardInterrupt, RecursionError, MemoryError)):
        return
    frame, lineno = last.tb_frame, last.tb_lineno
    try:
        import linecache
        source = linecache.getline(_path, lineno)
    except Exception:
        source = ""
    short = reprlib.Repr()
    short.maxstring, short.maxother, short.maxlist, short.maxdict, short.maxtuple, short.maxset = 120, 120, 6, 6, 6, 6
    skip = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, types.MethodType)
    names = [n for n, v in frame.f_locals.items() if not n.startswith("__") and not isinstance(v, skip)]
    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))
    names = sorted(names, key=lambda n: n not in used)[:12]
    if not names:
        return
    where = "module level" if frame.f_code.co_name == "<module>" else "in " + frame.f_code.co_name + "()"
    lines = ["%s (%s line %d, %s):" % (HEADER, os.path.basename(_path), lineno, where)]
    for n in names:
        try:
            text = short.repr(frame.f_locals[n])
        except Exception as exc:
            text = "<repr failed: %s>" % type(exc).__name__
        lines.append("  %s = %s" % (n, text if len(text) <= 240 else text[:240] + "..."))
    print("\n".join(lines), file=sys.stderr)
'''.replace("HEADER", repr(LOCALS_HEADER))
"""The excepthook that prints, under the traceback, the values of the variables of the failing line of the file
`_path` (the kernel calls it with its block's file, agents/sandbox/kernel.py)."""

BOOTSTRAP = r'''
_codeduet_package = __import__("sys").argv.pop(1)[10:] if __import__("sys").argv[1].startswith("--package=") else ""
''' + HOOK + r'''
__import__("sys").excepthook = _codeduet_hook
del _codeduet_hook
__import__("sys").argv = __import__("sys").argv[1:]
__file__ = __import__("os").path.abspath(__import__("sys").argv[0])
__import__("sys").path[0] = __import__("os").getcwd() if _codeduet_package else __import__("os").path.dirname(__file__)
__package__ = _codeduet_package or None  # a package's module runs as `python3 -m pkg.mod` would: relative imports work
del _codeduet_package
exec(compile(open(__file__, "rb").read(), __file__, "exec"))
'''


def python_argv(python: str, filename: str, error_locals: bool, package: str | None = None) -> list[str]:
    """argv that runs `filename` (unbuffered), through the bootstrap when error_locals is on; a module of `package`
    runs as `python3 -m package.module` does (the working directory on sys.path, relative imports resolved)."""
    if not error_locals:
        module = filename[:-3].replace("/", ".")
        return [python, "-u", "-m", module] if package else [python, "-u", filename]
    return [python, "-u", "-c", BOOTSTRAP, *([f"--package={package}"] if package else []), filename]
