"""opgen: LLM-written native operator kernels, admitted to a registry only when proven."""

__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "Client":
        # `from opgen import Client` without making every `import opgen` load openai and numpy.
        from opgen.pipelines.client import Client

        return Client
    raise AttributeError(f"module 'opgen' has no attribute {name!r}")
