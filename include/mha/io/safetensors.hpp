// mha/io/safetensors.hpp -- load PyTorch weights from safetensors files.
//
// Not included by <mha/mha.hpp>: it needs nlohmann-json (CMake target
// mha::io) and does file I/O. Works with and without exceptions: the
// try_load_* functions never throw on a bad file and compile with
// -fno-exceptions (for the fixed-size modules; mha::dynamic needs exceptions);
// the load_* functions throw mha::io::load_error and exist only when
// exceptions are enabled. See docs/loading-weights.md.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <mha/io/detail/model_plan.hpp>
#include <mha/io/detail/safetensors_reader.hpp>
#include <mha/io/load_result.hpp>

namespace mha::io {

namespace detail {

/// Full message: "mha::io: <file>: tensor '<name>': <what>".
inline load_result to_result(const error& e, const std::string& file) {
  load_result r;
  r.code = e.code;
  r.tensor = e.tensor;
  r.message = "mha::io: " + file + ": ";
  if (!e.tensor.empty()) r.message += "tensor '" + e.tensor + "': ";
  r.message += e.what;
  return r;
}

inline bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}

/// The loader: validate the whole header, check every needed tensor, read and
/// convert them into scratch buffers, and only then copy into the model.
template <class Model>
error load_into(byte_source& src, Model& model, const load_options& opt) {
  using T = typename Model::value_type;
  header_info h;
  if (auto e = parse_header(src, h)) return e;

  attention_desc<T> desc;
  if (auto e = describe(model, desc)) return e;
  plan<T> p;
  if (auto e = make_plan(desc, opt.format, opt.prefix, p)) return e;

  // Presence: missing weights, biases the model lacks (qkv_bias mismatch).
  for (const auto& t : p.tensors) {
    const tensor_entry* e = h.find(t.name);
    if (t.kind == role::weight && e == nullptr) {
      const bool is_bias = t.is_qkv_bias;
      return make_error(is_bias ? load_errc::qkv_bias : load_errc::missing_tensor, t.name,
                        is_bias ? "missing from the file, but " + t.why
                                : std::string("missing from the file (checkpoint_format ") +
                                      (opt.format == checkpoint_format::book ? "book"
                                       : opt.format == checkpoint_format::gpt2 ? "gpt2"
                                                                               : "pytorch_multihead") +
                                      (opt.prefix.empty() ? std::string(", no prefix)")
                                                          : ", prefix '" + opt.prefix + "')"));
    }
    if (t.kind == role::forbidden && e != nullptr)
      return make_error(load_errc::qkv_bias, t.name, "present in the file, but " + t.why);
  }
  // Strictness: nothing under the prefix that the model does not use.
  if (!opt.allow_extra_tensors) {
    for (const auto& e : h.tensors) {
      if (!starts_with(e.name, opt.prefix)) continue;
      bool known = false;
      for (const auto& t : p.tensors) known = known || (t.name == e.name && t.kind != role::forbidden);
      if (!known)
        return make_error(load_errc::unexpected_tensor, e.name,
                          "unexpected tensor " + std::string(info_of(e.type).name) + " " +
                              shape_text(e.shape) + " for " + desc.model_name +
                              " (set load_options::allow_extra_tensors to ignore it)");
    }
  }
  // Shapes, dtypes, values: into scratch.
  std::vector<std::vector<T>> scratch(p.tensors.size());
  for (std::size_t i = 0; i < p.tensors.size(); ++i) {
    const auto& t = p.tensors[i];
    const tensor_entry* e = h.find(t.name);
    if (e == nullptr || t.kind == role::ignored || t.kind == role::forbidden) continue;
    if (t.kind == role::mask) {
      const std::vector<std::uint64_t> want{p.context_length, p.context_length};
      if (e->shape != want)
        return make_error(load_errc::mask, t.name,
                          "mask shape " + shape_text(e->shape) + " does not match the model's " +
                              "context_length: expected " + shape_text(want));
      std::vector<unsigned char> flags;
      if (auto err = read_flags(src, h, *e, flags)) return err;
      for (std::size_t r = 0; r < p.context_length; ++r)
        for (std::size_t c = 0; c < p.context_length; ++c)
          if (flags[r * p.context_length + c] != (c > r ? 1 : 0))
            return make_error(load_errc::mask, t.name,
                              "element [" + std::to_string(r) + "][" + std::to_string(c) + "] is " +
                                  std::to_string(flags[r * p.context_length + c]) +
                                  "; the causal mask is 1 exactly above the diagonal");
      continue;
    }
    if (!is_float_dtype(e->type))
      return make_error(load_errc::dtype, t.name,
                        std::string("dtype ") + info_of(e->type).name +
                            " cannot hold weights (expected F32, F64, F16 or BF16)");
    if (e->shape != t.shape)
      return make_error(load_errc::shape, t.name,
                        "shape " + shape_text(e->shape) + " in the file, expected " +
                            shape_text(t.shape) + " for " + desc.model_name + " (d_in " +
                            std::to_string(desc.d_in) + ", d_out " + std::to_string(desc.d_out) +
                            (desc.type == attention_desc<T>::kind::wrapper
                                 ? ", num_heads " + std::to_string(desc.num_heads)
                                 : std::string()) +
                            ")");
    if (auto err = read_converted<T>(src, h, *e, opt.allow_non_finite, scratch[i])) return err;
  }
  // Commit: cannot fail.
  for (std::size_t i = 0; i < p.tensors.size(); ++i) {
    const auto& buf = scratch[i];
    if (buf.empty()) continue;
    for (const auto& s : p.tensors[i].sinks)
      for (std::size_t r = 0; r < s.rows; ++r)
        for (std::size_t c = 0; c < s.cols; ++c)
          s.dest[r * s.cols + c] = buf[s.src_offset + r * s.src_row_stride + c * s.src_col_stride];
  }
  return {};
}

template <class Model>
constexpr void check_loadable() noexcept {
  static_assert(is_loadable_v<Model>,
                "mha::io::load_safetensors: the model must be an mha::causal_attention, "
                "multi_head_attention_wrapper, multi_head_attention, fused_multi_head_attention "
                "or one of their mha::dynamic twins");
}

}  // namespace detail

/// Loads the weights of `model` from the safetensors file `path`, without
/// throwing: returns a load_result whose ok() is true on success; otherwise
/// code/message/tensor say what was wrong and `model` is unchanged (all
/// tensors are read and checked into scratch buffers before any is copied).
///
/// Model: mha::causal_attention, multi_head_attention_wrapper,
/// multi_head_attention, fused_multi_head_attention (any template arguments),
/// or their mha::dynamic twins (when exceptions are enabled). Tensor names and
/// layouts follow `options.format` (see checkpoint_format), each prefixed by
/// `options.prefix`. File dtypes F32, F64, F16, BF16 are converted to the
/// model's T with round to nearest. Only std::bad_alloc can escape (when
/// exceptions are enabled); without exceptions an allocation failure aborts.
template <class Model>
load_result try_load_safetensors(const std::filesystem::path& path, Model& model,
                                 const load_options& options = {}) {
  detail::check_loadable<Model>();
  detail::file_source src;
  if (auto e = src.open(path)) return detail::to_result(e, path.string());
  if (auto e = detail::load_into(src, model, options)) return detail::to_result(e, path.string());
  return {};
}

/// Same as try_load_safetensors(path, ...) for a safetensors file already in
/// memory (`data`, `size` bytes; e.g. a blob in flash). `name` is used in
/// messages in place of a file name.
template <class Model>
load_result try_load_safetensors_memory(const void* data, std::size_t size, Model& model,
                                        const load_options& options = {},
                                        const std::string& name = "<memory>") {
  detail::check_loadable<Model>();
  detail::memory_source src(data, size);
  if (auto e = detail::load_into(src, model, options)) return detail::to_result(e, name);
  return {};
}

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
/// Loads the weights of `model` from the safetensors file `path` (see
/// try_load_safetensors). Throws mha::io::load_error, whose message names the
/// file, the tensor and what was wrong; `model` is then unchanged.
template <class Model>
void load_safetensors(const std::filesystem::path& path, Model& model, const load_options& options) {
  const load_result r = try_load_safetensors(path, model, options);
  if (!r.ok()) throw load_error(r);
}

/// load_safetensors(path, model, {format, prefix}): strict, non-finite values rejected.
template <class Model>
void load_safetensors(const std::filesystem::path& path, Model& model,
                      checkpoint_format format = checkpoint_format::book,
                      std::string_view prefix = "") {
  load_options o;
  o.format = format;
  o.prefix = std::string(prefix);
  load_safetensors(path, model, o);
}

/// Throwing form of try_load_safetensors_memory.
template <class Model>
void load_safetensors_memory(const void* data, std::size_t size, Model& model,
                             const load_options& options = {}, const std::string& name = "<memory>") {
  const load_result r = try_load_safetensors_memory(data, size, model, options, name);
  if (!r.ok()) throw load_error(r);
}
#endif

}  // namespace mha::io

#endif  // MHA_DETAIL_NO_CXX20
