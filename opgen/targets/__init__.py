"""The native targets, one package each (cpp, rust, cuda, metal; gpu holds what CUDA and Metal
share), every one providing the protocol of ``opgen.targets.base.Target``. Look a target up
with ``opgen.targets.catalog.target_for``. This module imports nothing, so reading one
target's module does not load the others."""
