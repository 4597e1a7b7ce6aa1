"""opgen: LLM-written native operator kernels, admitted only when proven."""

__version__ = "0.1.0"
