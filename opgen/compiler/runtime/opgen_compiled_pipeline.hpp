// opgen compiled-function runtime, pipeline part: what C++ emitted for opgen.pipelines.embed
// uses. The model's pipeline glue (opgen/pipelines/native/<architecture>.cpp) is linked into
// the same library; its C entry points are declared hidden here, so the library does not
// export them (the linker keeps the most constraining visibility) and the emitted code
// cannot be interposed by another pipeline library loaded into the process.
#ifndef OPGEN_COMPILED_PIPELINE_HPP
#define OPGEN_COMPILED_PIPELINE_HPP

#include <sys/stat.h>

#include "opgen_compiled.hpp"

extern "C" {
__attribute__((visibility("hidden"))) int32_t opgen_pipeline_open(const char* model_dir, const double* config,
                                                                  int64_t n_config, void** handle, opgen_error* err);
__attribute__((visibility("hidden"))) int64_t opgen_pipeline_dim(void* handle);
__attribute__((visibility("hidden"))) int32_t opgen_pipeline_embed(void* handle, const opgen_string* texts, int64_t n,
                                                                   int64_t dims, float* out, int64_t* tokens,
                                                                   opgen_error* err);
__attribute__((visibility("hidden"))) void opgen_pipeline_close(void* handle);
}

namespace opgen::compiled {

// Tokens the pipelines processed during the current call of the entry point on this
// thread (reset by the entry point, read by the host through opgen_usage_<function>).
inline int64_t& pipeline_tokens() {
  static thread_local int64_t tokens = 0;
  return tokens;
}

// One model's pipeline, opened from the directory and config resolved at compile time.
class Pipeline {
 public:
  Pipeline(const char* model, const std::string& dir, const double* config, int64_t n_config) : model_(model) {
    struct stat st{};
    if (stat((dir + "/config.json").c_str(), &st) != 0)
      raise(ErrorKind::Internal, model_ + ": the model's files are not at " + dir +
                                     " (the directory resolved when this library was compiled); install the model "
                                     "there again or recompile the function where it is installed");
    opgen_error err{};
    if (opgen_pipeline_open(dir.c_str(), config, n_config, &handle_, &err) != 0)
      raise(static_cast<ErrorKind>(err.kind), model_ + ": cannot open the pipeline in " + dir + ": " + err.message);
    dim_ = opgen_pipeline_dim(handle_);
    if (dim_ <= 0) {
      opgen_pipeline_close(handle_);
      raise(ErrorKind::Internal, model_ + ": the pipeline in " + dir + " reports no embedding dimension");
    }
  }

  // (len(texts), dim) float32, L2-normalised rows.
  Array embed(const std::vector<std::string>& texts) {
    const auto n = static_cast<int64_t>(texts.size());
    Array out = Array::empty(opgen_dtype{2, 32, 1}, {n, dim_});
    if (n == 0) return out;
    const auto views = string_views(texts);
    std::vector<int64_t> tokens(static_cast<size_t>(n));
    opgen_error err{};
    opgen_tensor t = out.view();
    if (opgen_pipeline_embed(handle_, views.data(), n, dim_, static_cast<float*>(t.data), tokens.data(), &err) != 0)
      raise(static_cast<ErrorKind>(err.kind), model_ + ": " + err.message);
    for (int64_t k : tokens) pipeline_tokens() += k;
    return out;
  }

 private:
  std::string model_;
  void* handle_ = nullptr;
  int64_t dim_ = 0;
};

}  // namespace opgen::compiled

#endif
