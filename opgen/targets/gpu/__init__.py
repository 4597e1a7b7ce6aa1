"""GPU targets (CUDA and Metal): the device-kernel contract, the generated host code, the
GPU source policy, the builds (nvcc; Apple's metal where it exists) and the CPU execution
layer that runs device code on the CPU for verification. See README.md in this directory
for what a kernel admitted as ``emulated`` has and has not been shown to do.
"""
