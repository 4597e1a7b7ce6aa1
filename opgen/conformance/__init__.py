"""Conformance suites: other projects' test cases run through the registry's served kernels.

``opgen conformance onnx`` (``opgen.conformance.run``) takes the ONNX backend node test cases of
every ONNX op that maps to an opgen op (``opgen.conformance.mapping``, a table), translates each
case into a call of the opgen op's served kernel, runs the calls through the kernel's C ABI in a
sandboxed child process (``opgen.conformance.worker``: a crash, an abort or a hang is a result,
not the end of the run) and compares with the case's expected outputs the way ONNX's backend
runner does (``opgen.conformance.check``). Each case is a ``pass``, ``wrong``, ``error`` or
``inexpressible`` (with the dtype, attribute, input, output or op that the opgen op lacks).
docs/conformance.md has the mapping table and the rules.
"""
