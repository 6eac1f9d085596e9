// mha/io/safetensors.hpp -- load PyTorch weights from safetensors files.
//
// Not included by <mha/mha.hpp>: it needs nlohmann-json (CMake target
// mha::io) and does file I/O. Works with and without exceptions: the
// try_load_* functions never throw on a bad file and compile with
// -fno-exceptions (for the fixed-size modules; mha::dynamic needs exceptions);
// the load_* functions throw mha::io::load_error and exist only when
// exceptions are enabled. See docs/loading-weights.md.
//
// Its internals (mha::io::detail) live in the ISA namespace and the load
// functions carry the ISA's ABI tag, as the kernels and the modules' forward
// do (docs/design.md, "ISA namespaces"): translation units built for
// different instruction sets get their own copies.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <mha/io/detail/model_plan.hpp>
#include <mha/io/detail/safetensors_reader.hpp>
#include <mha/io/load_result.hpp>

#include <mha/detail/macros.hpp>

namespace mha::io {

namespace detail {
MHA_DETAIL_ISA_NAMESPACE {

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

/// A successful load_result carrying `warnings` as full messages.
inline load_result success(const std::vector<std::string>& warnings, const std::string& file) {
  load_result r;
  for (const auto& w : warnings) r.warnings.push_back("mha::io: " + file + ": warning: " + w);
  return r;
}

inline bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}

/// A `__metadata__` value as a decimal count: digits only, at most 19 of them
/// (always fits 64 bits). Read into std::uint64_t, not std::size_t: on a
/// 32-bit target a count such as 4294967298 would wrap to 2 and pass as the
/// model's; compared as 64-bit numbers it is the mismatch it is.
inline bool parse_count(const std::string& s, std::uint64_t& v) noexcept {
  if (s.empty() || s.size() > 19) return false;
  v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

/// A `__metadata__` value as a bool: true/True/1 or false/False/0.
inline bool parse_flag(const std::string& s, bool& v) noexcept {
  if (s == "true" || s == "True" || s == "1") return v = true, true;
  if (s == "false" || s == "False" || s == "0") return v = false, true;
  return false;
}

/// The formats a file's `__metadata__` `checkpoint_format` can name.
inline constexpr checkpoint_format stored_formats[] = {
    checkpoint_format::book, checkpoint_format::pytorch_multihead, checkpoint_format::gpt2,
    checkpoint_format::neox, checkpoint_format::llama};

/// Checks the hyperparameters the file records in `__metadata__` (unless
/// opt.ignore_metadata) and opt.expected_num_heads against the model `d` and
/// the options; sets `layout` to the fused QKV layout to use (the options',
/// else the file's, else unspecified) and adds a warning when the head count
/// of a multi-head model could not be verified.
template <class T>
error check_hyperparameters(const header_info& h, const attention_desc<T>& d,
                            const load_options& opt, checkpoint_format format, qkv_layout& layout,
                            std::vector<std::string>& warnings) {
  layout = opt.layout;
  bool heads_known = false;
  if (opt.expected_num_heads != 0) {
    if (opt.expected_num_heads != d.num_heads)
      return make_error(load_errc::hyperparameter, "",
                        "load_options::expected_num_heads is " +
                            std::to_string(opt.expected_num_heads) + ", but the model (" +
                            d.model_name + ") has num_heads = " + std::to_string(d.num_heads));
    heads_known = true;
  }
  if (!opt.ignore_metadata) {
    const auto mismatch = [](const std::string& key, const std::string& found,
                             const std::string& expected, const std::string& whose) {
      return make_error(load_errc::hyperparameter, "",
                        "__metadata__ '" + key + "' is " + found + " in the file, expected " +
                            expected + " (" + whose + ")");
    };
    const auto unreadable = [](const std::string& key, const std::string& value, const char* what) {
      return make_error(load_errc::hyperparameter, "",
                        "__metadata__ '" + key + "' is \"" + value + "\", not " + what +
                            " (set load_options::ignore_metadata to skip these checks)");
    };
    const std::string model_is = "the model's: " + d.model_name;
    const std::pair<const char*, std::size_t> counts[] = {
        {"num_heads", d.num_heads}, {"num_kv_heads", d.num_kv_heads}, {"d_in", d.d_in},
        {"d_out", d.d_out}, {"kdim", d.key_dim}, {"vdim", d.value_dim}};
    for (const auto& [key, value] : counts) {
      const std::string* v = h.metadata_value(key);
      if (v == nullptr) continue;
      std::uint64_t found = 0;
      if (!parse_count(*v, found)) return unreadable(key, *v, "a non-negative integer");
      if (found != std::uint64_t{value}) return mismatch(key, *v, std::to_string(value), model_is);
      if (std::string_view(key) == "num_heads") heads_known = true;
    }
    // No parameter depends on context_length (only the book's mask buffer,
    // checked on its own), so a model with another context takes the weights;
    // a longer one attends over more positions than the checkpoint was made for.
    if (const std::string* v = h.metadata_value("context_length")) {
      std::uint64_t found = 0;
      if (!parse_count(*v, found)) return unreadable("context_length", *v, "a non-negative integer");
      if (found < std::uint64_t{d.context_length})
        warnings.push_back("__metadata__ 'context_length' is " + *v + " in the file, the model's is " +
                           std::to_string(d.context_length) + " (" + d.model_name +
                           "): positions from " + *v + " on were not in the checkpoint's context");
    }
    if (const std::string* v = h.metadata_value("qkv_bias")) {
      bool found = false;
      if (!parse_flag(*v, found)) return unreadable("qkv_bias", *v, "true or false");
      if (found != d.qkv_bias) return mismatch("qkv_bias", *v, d.qkv_bias ? "true" : "false", model_is);
    }
    if (const std::string* v = h.metadata_value("checkpoint_format")) {
      bool known = false;
      for (const auto f : stored_formats) known = known || *v == to_string(f);
      if (!known)
        return unreadable("checkpoint_format", *v, "book, pytorch_multihead, gpt2, neox or llama");
      if (*v != to_string(format))
        return mismatch("checkpoint_format", *v, to_string(format), "load_options::format");
    }
    if (const std::string* v = h.metadata_value("qkv_layout")) {
      qkv_layout found = qkv_layout::unspecified;
      for (const auto l : {qkv_layout::contiguous, qkv_layout::interleaved_per_head})
        if (*v == to_string(l)) found = l;
      if (found == qkv_layout::unspecified)
        return unreadable("qkv_layout", *v, "contiguous or interleaved_per_head");
      if (layout == qkv_layout::unspecified)
        layout = found;
      else if (layout != found)
        return mismatch("qkv_layout", *v, to_string(layout), "load_options::layout");
    }
  }
  if (!heads_known && d.type == attention_desc<T>::kind::multi)
    warnings.push_back("the checkpoint's head count is not verified: the file records no "
                       "'num_heads' in its __metadata__ and load_options::expected_num_heads "
                       "is 0, so a checkpoint of another head count (same d_in and d_out) "
                       "would have loaded without an error and given wrong outputs; the model "
                       "has num_heads = " + std::to_string(d.num_heads));
  return {};
}

/// The format whose characteristic tensor (format_names) the file has under
/// `prefix`; checkpoint_format::detect when none.
inline constexpr std::pair<checkpoint_format, const char*> format_names[] = {
    {checkpoint_format::pytorch_multihead, "in_proj_weight"},
    {checkpoint_format::pytorch_multihead, "q_proj_weight"},  // kdim / vdim != embed_dim
    {checkpoint_format::gpt2, "c_attn.weight"},
    {checkpoint_format::neox, "query_key_value.weight"},
    {checkpoint_format::llama, "q_proj.weight"},
    {checkpoint_format::book, "W_query.weight"},
    {checkpoint_format::book, "heads.0.W_query.weight"},
};
MHA_DETAIL_ISA_TAG inline checkpoint_format format_of_names(const header_info& h,
                                                            const std::string& prefix,
                                                            const char** name = nullptr) {
  for (const auto& [format, tensor] : format_names)
    if (h.find(prefix + tensor) != nullptr) {
      if (name != nullptr) *name = tensor;
      return format;
    }
  return checkpoint_format::detect;
}

/// The format of this load: load_options::format, or for detect the one the
/// file records in its `__metadata__` (unless ignore_metadata; an unknown
/// value is left to check_hyperparameters' error) or its names fit.
MHA_DETAIL_ISA_TAG inline checkpoint_format resolve_format(const header_info& h,
                                                           const load_options& opt) {
  if (opt.format != checkpoint_format::detect) return opt.format;
  if (!opt.ignore_metadata)
    if (const std::string* v = h.metadata_value("checkpoint_format"))
      for (const auto f : stored_formats)
        if (*v == to_string(f)) return f;
  const checkpoint_format fit = format_of_names(h, opt.prefix);
  return fit == checkpoint_format::detect ? checkpoint_format::book : fit;
}

/// For a missing tensor: "; the file's tensor names fit checkpoint_format
/// gpt2 ('h.0.attn.c_attn.weight')" when they fit another format than
/// `format` (a format given by the caller that does not match the file);
/// empty otherwise.
MHA_DETAIL_ISA_TAG inline std::string names_fit_another(const header_info& h,
                                                        const std::string& prefix,
                                                        checkpoint_format format) {
  const char* name = "";
  const checkpoint_format fit = format_of_names(h, prefix, &name);
  if (fit == format || fit == checkpoint_format::detect) return {};
  return std::string("; the file's tensor names fit checkpoint_format ") + to_string(fit) +
         " ('" + prefix + name + "')";
}

/// Where a detected format came from, for messages: "" when the caller gave
/// it, " from the file's __metadata__", " detected from the tensor names" or,
/// when no format's names were found under the prefix, " (detect's default:
/// no format's tensor names under the prefix)".
MHA_DETAIL_ISA_TAG inline std::string format_source(const header_info& h, const load_options& opt) {
  if (opt.format != checkpoint_format::detect) return {};
  if (!opt.ignore_metadata && h.metadata_value("checkpoint_format") != nullptr)
    return " from the file's __metadata__";
  if (format_of_names(h, opt.prefix) != checkpoint_format::detect)
    return " detected from the tensor names";
  return " (detect's default: no format's tensor names under the prefix)";
}

/// For a missing tensor: "; the prefix 'h.1' does not end with '.'" when the
/// prefix is not empty and does not end with a dot (it is prepended as it is:
/// 'h.1W_query.weight').
MHA_DETAIL_ISA_TAG inline std::string prefix_hint(const std::string& prefix) {
  if (prefix.empty() || prefix.back() == '.') return {};
  return "; the prefix '" + prefix + "' does not end with '.' (it is prepended as it is)";
}

/// For an unexpected tensor of a wrapper model: "; the file has K heads
/// (heads.0 .. heads.K-1), the model num_heads = N" when the file's
/// `<prefix>heads.<i>.` indices go beyond the model's heads; empty otherwise.
MHA_DETAIL_ISA_TAG inline std::string head_count_hint(const header_info& h,
                                                      const std::string& prefix,
                                                      std::size_t num_heads) {
  const std::string base = prefix + "heads.";
  std::size_t file_heads = 0;
  for (const auto& e : h.tensors) {
    if (e.name.compare(0, base.size(), base) != 0) continue;
    std::size_t i = base.size(), index = 0;
    // digits read while index * 10 + 9 cannot overflow (2^32 with a 64-bit std::size_t)
    constexpr std::size_t max_index = std::size_t{1} << (std::numeric_limits<std::size_t>::digits / 2);
    bool digits = false;
    for (; i < e.name.size() && e.name[i] >= '0' && e.name[i] <= '9' && index < max_index; ++i) {
      index = index * 10 + static_cast<std::size_t>(e.name[i] - '0');
      digits = true;
    }
    if (digits && i < e.name.size() && e.name[i] == '.' && index + 1 > file_heads)
      file_heads = index + 1;
  }
  if (file_heads <= num_heads) return {};
  return "; the file has " + std::to_string(file_heads) + " heads (" + base + "0 .. " + base +
         std::to_string(file_heads - 1) + "), the model num_heads = " + std::to_string(num_heads);
}

/// For a shape error of a grouped-query key/value weight: "; the file's N
/// rows are F key/value heads of head_dim D, the model has num_kv_heads = K
/// (num_kv_heads * head_dim = K*D rows)"; empty for other tensors.
template <class T>
std::string kv_heads_hint(const tensor_entry& e, const planned_tensor<T>& t) {
  if (t.kv_head_dim == 0 || e.shape.size() != 2) return {};
  const std::size_t rows = static_cast<std::size_t>(e.shape[0]);
  const std::string hd = std::to_string(t.kv_head_dim);
  return "; the file's " + std::to_string(rows) + " rows are " +
         (rows % t.kv_head_dim == 0 ? std::to_string(rows / t.kv_head_dim) + " key/value heads"
                                    : std::string("no whole number of key/value heads")) +
         " of head_dim " + hd + ", the model has num_kv_heads = " + std::to_string(t.kv_heads) +
         " (" + std::to_string(t.kv_heads * t.kv_head_dim) + " rows)";
}

/// For a shape error of a key / value weight (planned_tensor::kv_input) with
/// the model's rows and other columns: "; its C columns are the checkpoint's
/// key input width (kdim), the model's kdim is K (...)"; empty otherwise.
template <class T>
std::string kv_width_hint(const tensor_entry& e, const planned_tensor<T>& t,
                          const attention_desc<T>& d) {
  if (t.kv_input == 0 || e.shape.size() != 2 || t.shape.size() != 2 || e.shape[0] != t.shape[0] ||
      e.shape[1] == t.shape[1])
    return {};
  const bool key = t.kv_input == 'k';
  const std::size_t model = key ? d.key_dim : d.value_dim;
  return "; its " + std::to_string(e.shape[1]) + " columns are the checkpoint's " +
         (key ? "key input width (kdim)" : "value input width (vdim)") + ", the model's " +
         (key ? "kdim" : "vdim") + " is " + std::to_string(model) +
         (model == d.d_in ? " (= d_in): a cross-attention checkpoint loads into a "
                            "multi_head_attention with its KDim / VDim (mha::dynamic: kv_dims)"
                          : std::string());
}

/// The loader after the model's description: check the hyperparameters and
/// every needed tensor of the parsed header `h`, read and convert them into
/// scratch buffers, and only then copy into the model (through the sinks of
/// `desc`, which point into it). Appends what it could not verify to
/// `warnings`. One instantiation per value type T, not per model type: the
/// model enters only through its description (load_into), so a program that
/// loads many model types compiles this once (about 8 KB of object code on
/// ARMv7 per model type when it was one per model type).
template <class T>
error load_described(byte_source& src, const header_info& h, attention_desc<T>& desc,
                     const load_options& opt, std::vector<std::string>& warnings) {
  qkv_layout layout = qkv_layout::unspecified;
  const checkpoint_format format = resolve_format(h, opt);
  if (auto e = check_hyperparameters(h, desc, opt, format, layout, warnings)) return e;
  if (opt.rope_layout == rope_layout::interleaved) {
    const std::size_t hd = desc.d_out / (desc.num_heads == 0 ? 1 : desc.num_heads);
    if (!desc.has_rope || hd % 2 != 0)
      return make_error(load_errc::layout, "",
                        "load_options::rope_layout is rope_layout::interleaved, but the model (" +
                            desc.model_name + ") " +
                            (desc.has_rope ? "has an odd head_dim = " + std::to_string(hd)
                                           : std::string("has no RoPE")) +
                            ": the rows of its queries and keys are not rotated in pairs");
  }
  plan<T> p;
  if (auto e = make_plan(desc, format, layout, opt.rope_layout, opt.prefix, p)) return e;

  // Presence: missing weights, biases the model lacks (qkv_bias mismatch).
  for (const auto& t : p.tensors) {
    const tensor_entry* e = h.find(t.name);
    if (t.kind == role::weight && e == nullptr) {
      const bool is_bias = t.is_qkv_bias;
      return make_error(is_bias ? load_errc::qkv_bias : load_errc::missing_tensor, t.name,
                        is_bias ? "missing from the file, but " + t.why
                                : std::string("missing from the file (checkpoint_format ") +
                                      to_string(format) + format_source(h, opt) +
                                      (opt.prefix.empty() ? std::string(", no prefix)")
                                                          : ", prefix '" + opt.prefix + "')") +
                                      names_fit_another(h, opt.prefix, format) +
                                      prefix_hint(opt.prefix));
    }
    if (t.kind == role::forbidden && e != nullptr) {
      // a tensor of the model's other form (load_errc::shape) is named with its shape
      const std::string present =
          t.forbidden_code == load_errc::qkv_bias ? std::string("present in the file, but ")
          : t.forbidden_code == load_errc::shape
              ? "present in the file (" + std::string(info_of(e->type).name) + " " +
                    shape_text(e->shape) + "): "
              : std::string("present in the file: ");
      return make_error(t.forbidden_code, t.name, present + t.why);
    }
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
                              " (set load_options::allow_extra_tensors to ignore it)" +
                              (desc.type == attention_desc<T>::kind::wrapper
                                   ? head_count_hint(h, opt.prefix, desc.num_heads)
                                   : std::string()));
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
                            std::to_string(desc.d_in) +
                            (is_cross(desc) ? ", kdim " + std::to_string(desc.key_dim) + ", vdim " +
                                                  std::to_string(desc.value_dim)
                                            : std::string()) +
                            ", d_out " + std::to_string(desc.d_out) +
                            (desc.type == attention_desc<T>::kind::wrapper
                                 ? ", num_heads " + std::to_string(desc.num_heads)
                                 : std::string()) +
                            ")" + kv_heads_hint(*e, t) + kv_width_hint(*e, t, desc));
    if (auto err = read_converted<T>(src, h, *e, opt.allow_non_finite, scratch[i])) return err;
  }
  // Commit: cannot fail.
  for (std::size_t i = 0; i < p.tensors.size(); ++i) {
    const auto& buf = scratch[i];
    if (buf.empty() && p.tensors[i].kind == role::optional && h.find(p.tensors[i].name) == nullptr) {
      for (const auto& s : p.tensors[i].sinks)  // absent optional tensor: zero
        for (std::size_t r = 0; r < s.rows; ++r)
          for (std::size_t c = 0; c < s.cols; ++c) s.dest[r * s.cols + c] = T{};
      continue;
    }
    if (buf.empty()) continue;
    for (const auto& s : p.tensors[i].sinks)
      for (std::size_t r = 0; r < s.rows; ++r)
        for (std::size_t c = 0; c < s.cols; ++c)
          s.dest[r * s.cols + c] = buf[s.src_offset + r * s.src_row_stride + c * s.src_col_stride];
  }
  return {};
}

/// The loader: validate the whole header, describe the model (its
/// hyperparameters and where each tensor goes), then load_described.
template <class Model>
error load_into(byte_source& src, Model& model, const load_options& opt,
                std::vector<std::string>& warnings) {
  using T = typename Model::value_type;
  header_info h;
  if (auto e = parse_header(src, h)) return e;
  attention_desc<T> desc;
  if (auto e = describe(model, desc)) return e;
  return load_described<T>(src, h, desc, opt, warnings);
}

template <class Model>
constexpr void check_loadable() noexcept {
  static_assert(is_loadable_v<Model>,
                "mha::io::load_safetensors: the model must be an attention module with a "
                "parameter_description() (mha/parameters.hpp) and the attention hyperparameters "
                "d_in, d_out, context_length, num_heads, qkv_bias: mha::causal_attention, "
                "multi_head_attention_wrapper, multi_head_attention, fused_multi_head_attention, "
                "grouped_query_attention or one of their mha::dynamic twins");
}

}  // namespace MHA_DETAIL_ISA
}  // namespace detail

/// Loads the weights of `model` from the safetensors file `path`, without
/// throwing: returns a load_result whose ok() is true on success (its
/// `warnings` then list what could not be verified, e.g. the head count of a
/// file without hyperparameters in `__metadata__`); otherwise
/// code/message/tensor say what was wrong and `model` is unchanged (all
/// tensors are read and checked into scratch buffers before any is copied).
///
/// Model: mha::causal_attention, multi_head_attention_wrapper,
/// multi_head_attention, fused_multi_head_attention, grouped_query_attention
/// (any template arguments; its out_proj.bias is optional in the book and
/// llama formats and set to zero when the file has none),
/// or their mha::dynamic twins (when exceptions are enabled); in general any
/// module with a parameter_description() and the attention hyperparameters:
/// the plan is made from its parameter walk (mha/parameters.hpp; in
/// checkpoint_format::book the file's names are the walk's). Tensor names and
/// layouts follow `options.format` (see checkpoint_format) and
/// `options.layout`, each prefixed by `options.prefix`; the file's recorded
/// hyperparameters and `options.expected_num_heads` are checked (see load_options). File dtypes F32, F64, F16, BF16 are converted to the
/// model's T with round to nearest. Only std::bad_alloc can escape (when
/// exceptions are enabled); without exceptions an allocation failure aborts.
template <class Model>
MHA_DETAIL_ISA_TAG load_result try_load_safetensors(const std::filesystem::path& path, Model& model,
                                 const load_options& options = {}) {
  detail::check_loadable<Model>();
  detail::file_source src;
  if (auto e = src.open(path)) return detail::to_result(e, path.string());
  std::vector<std::string> warnings;
  if (auto e = detail::load_into(src, model, options, warnings))
    return detail::to_result(e, path.string());
  return detail::success(warnings, path.string());
}

/// Same as try_load_safetensors(path, ...) for a safetensors file already in
/// memory (`data`, `size` bytes; e.g. a blob in flash). `name` is used in
/// messages in place of a file name.
template <class Model>
MHA_DETAIL_ISA_TAG load_result try_load_safetensors_memory(const void* data, std::size_t size, Model& model,
                                        const load_options& options = {},
                                        const std::string& name = "<memory>") {
  detail::check_loadable<Model>();
  detail::memory_source src(data, size);
  std::vector<std::string> warnings;
  if (auto e = detail::load_into(src, model, options, warnings)) return detail::to_result(e, name);
  return detail::success(warnings, name);
}

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
/// Loads the weights of `model` from the safetensors file `path` (see
/// try_load_safetensors). Throws mha::io::load_error, whose message names the
/// file, the tensor and what was wrong; `model` is then unchanged. Returns the
/// (successful) load_result, whose `warnings` list what could not be verified.
template <class Model>
MHA_DETAIL_ISA_TAG load_result load_safetensors(const std::filesystem::path& path, Model& model,
                                                const load_options& options) {
  load_result r = try_load_safetensors(path, model, options);
  if (!r.ok()) throw load_error(r);
  return r;
}

/// load_safetensors(path, model, {format, prefix}): strict, non-finite values rejected.
template <class Model>
MHA_DETAIL_ISA_TAG load_result load_safetensors(const std::filesystem::path& path, Model& model,
                                                checkpoint_format format = checkpoint_format::detect,
                                                std::string_view prefix = "") {
  load_options o;
  o.format = format;
  o.prefix = std::string(prefix);
  return load_safetensors(path, model, o);
}

/// Throwing form of try_load_safetensors_memory (returns its successful load_result).
template <class Model>
MHA_DETAIL_ISA_TAG load_result load_safetensors_memory(const void* data, std::size_t size, Model& model,
                                    const load_options& options = {},
                                    const std::string& name = "<memory>") {
  load_result r = try_load_safetensors_memory(data, size, model, options, name);
  if (!r.ok()) throw load_error(r);
  return r;
}
#endif

}  // namespace mha::io

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
