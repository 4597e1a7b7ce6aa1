"""The CUDA target (``opgen.targets.cuda.target``)."""
