// What generated host code needs to run a CUDA kernel on a real device (compiled by nvcc).
// Hand-written, versioned with opgen.
//
// Tensors live either all in host memory (kDLCPU: packed, copied to the device, the result
// copied back; the call returns when the result is in place) or all in device memory
// (kDLCUDA: used in place, which needs them contiguous and of their full aligned shape; the
// launch is asynchronous on the default stream, as torch's own kernels are).
#ifndef OPGEN_GPU_CUDA_HOST_CUH
#define OPGEN_GPU_CUDA_HOST_CUH

#include <cuda_runtime.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "opgen_gpu_host.hpp"

namespace opgen::gpu {

constexpr int32_t kDLCPU = 1, kDLCUDA = 2;

inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(ErrorKind::Internal, std::string("CUDA error in ") + what + ": " + cudaGetErrorName(status) + " (" +
                                         cudaGetErrorString(status) + ")");
}

// The tensor's dtype, and whether it is in device memory.
inline bool check_tensor(const opgen_tensor* t, uint8_t code, uint8_t bits, const char* name) {
  if (t == nullptr) throw Error(ErrorKind::Value, std::string("tensor argument '") + name + "' is null");
  if (t->dtype.code != code || t->dtype.bits != bits || t->dtype.lanes != 1)
    throw Error(ErrorKind::Value, std::string("tensor argument '") + name + "' has the wrong dtype");
  if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDA)
    throw Error(ErrorKind::Value, std::string("tensor argument '") + name + "' is neither in host nor in CUDA memory");
  return t->device.device_type == kDLCUDA;
}

inline bool same_side(std::initializer_list<bool> on_device) {
  bool first = *on_device.begin();
  for (bool d : on_device)
    if (d != first) throw Error(ErrorKind::Value, "tensor arguments must be all in host memory or all in CUDA memory");
  return first;
}

// A kernel argument in device memory: a packed copy of a host tensor, or a device tensor in place.
template <class T>
class DeviceArray {
 public:
  DeviceArray(const char* name, const Tensor& t, bool on_device, bool output) : name_(name) {
    count_ = count(t.numel(), name);
    if (on_device) {
      if (!t.is_contiguous())
        throw Error(ErrorKind::Value, std::string("device tensor '") + name + "' must be contiguous and not broadcast "
                                      "(pass host tensors to have opgen pack them)");
      ptr_ = t.data<T>();
      return;
    }
    cuda_check(cudaMalloc(&owned_, (count_ ? count_ : 1) * sizeof(T)), "cudaMalloc");
    ptr_ = static_cast<T*>(owned_);
    if (!output && count_) {
      std::vector<T> host = pack<T>(t, name);
      cuda_check(cudaMemcpy(ptr_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    }
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    if (owned_) cudaFree(owned_);
  }
  T* get() const { return ptr_; }
  void copy_out(T* dst) const {
    if (count_) cuda_check(cudaMemcpy(dst, ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "the kernel or the copy back");
  }

 private:
  const char* name_;
  size_t count_ = 0;
  T* ptr_ = nullptr;
  void* owned_ = nullptr;
};

inline dim3 grid_of(const Launch& l) { return dim3(unsigned(l.grid[0]), unsigned(l.grid[1]), unsigned(l.grid[2])); }
inline dim3 block_of(const Launch& l) { return dim3(unsigned(l.block[0]), unsigned(l.block[1]), unsigned(l.block[2])); }

}  // namespace opgen::gpu

#endif
