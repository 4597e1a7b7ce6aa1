"""A compiler for a small subset of Python whose op library is the opgen registry.

    source --trace--> IR --propagate (registry lookups)--> typed IR --emit--> C++ --build--> library + manifest

See tracer.py (the subset), propagate.py and resolve.py (types from the registry),
emit_cpp.py (the C++), link.py (library and manifest), driver.py (the command), and
opgen/host.py for calling the result from Python.
"""

from opgen.compiler.driver import Compiled, compile_function, compile_many, parse_target_spec, synthesizer
from opgen.compiler.errors import CompileError, MissingOp

__all__ = ["Compiled", "CompileError", "MissingOp", "compile_function", "compile_many", "parse_target_spec", "synthesizer"]
