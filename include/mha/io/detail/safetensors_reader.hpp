// mha/io/detail/safetensors_reader.hpp -- reading and validating a safetensors
// file: byte sources (file, memory), header parsing with nlohmann-json, and
// dtype conversion. Never throws on bad input (errors are returned), so it also
// compiles and works with -fno-exceptions (nlohmann is only used through
// non-throwing calls: parse(..., allow_exceptions = false) and type checks
// before every access).
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <mha/detail/api/number_text.hpp>
#include <mha/detail/arch/half.hpp>
#include <mha/io/load_result.hpp>

#include <mha/detail/macros.hpp>

namespace mha::io::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// Largest header accepted (the same limit as the reference Rust implementation).
inline constexpr std::uint64_t max_header_size = 100'000'000;

/// Element types of the safetensors format.
enum class dtype { BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64 };

struct dtype_info {
  const char* name;
  dtype id;
  std::uint64_t size;
};
inline constexpr dtype_info dtype_table[] = {
    {"BOOL", dtype::BOOL, 1}, {"U8", dtype::U8, 1},   {"I8", dtype::I8, 1},
    {"F8_E5M2", dtype::F8_E5M2, 1}, {"F8_E4M3", dtype::F8_E4M3, 1}, {"I16", dtype::I16, 2},
    {"U16", dtype::U16, 2},   {"F16", dtype::F16, 2}, {"BF16", dtype::BF16, 2},
    {"I32", dtype::I32, 4},   {"U32", dtype::U32, 4}, {"F32", dtype::F32, 4},
    {"F64", dtype::F64, 8},   {"I64", dtype::I64, 8}, {"U64", dtype::U64, 8},
};
inline const dtype_info& info_of(dtype d) noexcept {
  for (const auto& i : dtype_table)
    if (i.id == d) return i;
  return dtype_table[0];
}
inline bool is_float_dtype(dtype d) noexcept {
  return d == dtype::F16 || d == dtype::BF16 || d == dtype::F32 || d == dtype::F64;
}

/// An error on the way: code, offending tensor name ("" if none) and detail text.
struct error {
  load_errc code = load_errc::none;
  std::string tensor;
  std::string what;
  explicit operator bool() const noexcept { return code != load_errc::none; }
};
inline error make_error(load_errc code, std::string tensor, std::string what) {
  return error{code, std::move(tensor), std::move(what)};
}

/// "[2][3]" (or "[]" for a scalar).
inline std::string shape_text(const std::vector<std::uint64_t>& shape) {
  if (shape.empty()) return "[] (scalar)";
  std::string s;
  for (const auto e : shape) {  // append() avoids GCC 12's false -Wrestrict on "[" + ...
    s.append("[");
    s.append(std::to_string(e));
    s.append("]");
  }
  return s;
}

/// One entry of the header.
struct tensor_entry {
  std::string name;
  dtype type = dtype::F32;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;  ///< byte range in the data section
  std::uint64_t count = 0;           ///< number of elements (product of shape)
};

/// The validated header: every tensor's byte range lies in the data section,
/// matches dtype x shape, and the ranges cover the data section exactly once.
struct header_info {
  std::vector<tensor_entry> tensors;  ///< sorted by name
  std::uint64_t data_start = 0;       ///< file offset of the data section
  std::uint64_t data_size = 0;        ///< bytes in the data section
  /// The `__metadata__` entries (string to string), in file order.
  std::vector<std::pair<std::string, std::string>> metadata;

  /// The `__metadata__` value of `key`, or nullptr.
  const std::string* metadata_value(std::string_view key) const noexcept {
    for (const auto& kv : metadata)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
  const tensor_entry* find(std::string_view name) const noexcept {
    auto it = std::lower_bound(tensors.begin(), tensors.end(), name,
                               [](const tensor_entry& e, std::string_view n) { return e.name < n; });
    return it != tensors.end() && it->name == name ? &*it : nullptr;
  }
};

/// Random-access bytes: a file or a memory buffer.
class byte_source {
 public:
  virtual ~byte_source() = default;
  /// Total size in bytes.
  virtual std::uint64_t size() const noexcept = 0;
  /// Copies [offset, offset + n) into dst; false on a read failure. The caller
  /// guarantees offset + n <= size().
  virtual bool read(std::uint64_t offset, std::uint64_t n, unsigned char* dst) noexcept = 0;
};

/// A whole buffer in memory (not copied; must outlive the source).
class memory_source final : public byte_source {
 public:
  memory_source(const void* data, std::size_t size) noexcept
      : data_(static_cast<const unsigned char*>(data)), size_(size) {}
  std::uint64_t size() const noexcept override { return size_; }
  bool read(std::uint64_t offset, std::uint64_t n, unsigned char* dst) noexcept override {
    if (offset > size_ || n > size_ - offset) return false;
    if (n != 0) std::memcpy(dst, data_ + offset, static_cast<std::size_t>(n));
    return true;
  }

 private:
  const unsigned char* data_;
  std::size_t size_;
};

/// A regular file opened for reading (std::FILE*, no exceptions).
class file_source final : public byte_source {
 public:
  file_source() = default;
  file_source(const file_source&) = delete;
  file_source& operator=(const file_source&) = delete;
  ~file_source() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  /// Opens `path`; returns an error for a missing path, a directory or
  /// anything but a regular file, or an unreadable file.
  error open(const std::filesystem::path& path) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st))
      return make_error(load_errc::io, "", "cannot open: no such file");
    if (std::filesystem::is_directory(st))
      return make_error(load_errc::io, "", "is a directory, not a safetensors file");
    if (!std::filesystem::is_regular_file(st))
      return make_error(load_errc::io, "", "is not a regular file");
    const auto n = std::filesystem::file_size(path, ec);
    if (ec) return make_error(load_errc::io, "", "cannot determine the file size: " + ec.message());
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) return make_error(load_errc::io, "", "cannot open for reading");
    size_ = n;
    return {};
  }
  std::uint64_t size() const noexcept override { return size_; }
  bool read(std::uint64_t offset, std::uint64_t n, unsigned char* dst) noexcept override {
    if (file_ == nullptr || offset > size_ || n > size_ - offset) return false;
    if (offset > static_cast<std::uint64_t>(std::numeric_limits<long>::max())) return false;
    if (std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0) return false;
    return std::fread(dst, 1, static_cast<std::size_t>(n), file_) == n;
  }

 private:
  std::FILE* file_ = nullptr;
  std::uint64_t size_ = 0;
};

/// Little-endian unsigned integer of `Bytes` bytes at p.
template <class U, std::size_t Bytes>
constexpr U load_le(const unsigned char* p) noexcept {
  U v = 0;
  for (std::size_t i = 0; i < Bytes; ++i) v |= static_cast<U>(static_cast<U>(p[i]) << (8 * i));
  return v;
}

/// JSON type name for messages.
inline std::string json_type(const nlohmann::json& j) { return j.type_name(); }

/// Reads and validates the header of `src` (see header_info).
inline error parse_header(byte_source& src, header_info& out) {
  using nlohmann::json;
  const std::uint64_t file_size = src.size();
  if (file_size == 0)
    return make_error(load_errc::io, "",
                      "empty file (0 bytes); a safetensors file starts with an 8-byte header length");
  if (file_size < 8)
    return make_error(load_errc::truncated, "",
                      "truncated: the file has " + std::to_string(file_size) +
                          " bytes, fewer than the 8-byte header length");
  unsigned char len_bytes[8];
  if (!src.read(0, 8, len_bytes)) return make_error(load_errc::io, "", "read error in the header length");
  const std::uint64_t n = load_le<std::uint64_t, 8>(len_bytes);
  if (n > max_header_size)
    return make_error(load_errc::header, "",
                      "header length " + std::to_string(n) + " exceeds the limit of " +
                          std::to_string(max_header_size) + " bytes");
  if (n > file_size - 8)
    return make_error(load_errc::truncated, "",
                      "truncated: header length " + std::to_string(n) + " is larger than the " +
                          std::to_string(file_size - 8) + " bytes after the length field");
  if (n < 2)
    return make_error(load_errc::header, "",
                      "header of " + std::to_string(n) + " bytes cannot be a JSON object");
  std::string text(static_cast<std::size_t>(n), '\0');
  if (!src.read(8, n, reinterpret_cast<unsigned char*>(text.data())))
    return make_error(load_errc::io, "", "read error in the header");

  // nlohmann-json skips a UTF-8 byte order mark before the text; the format has
  // none (the reference implementation rejects it), so neither do we.
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0)
    return make_error(load_errc::header, "",
                      "header starts with a UTF-8 byte order mark (bytes EF BB BF); the JSON "
                      "header must start with '{'");
  // JSON text cannot hold a raw NUL; nlohmann would stop at one and accept
  // whatever follows it (the reference implementation rejects such headers).
  if (text.find('\0') != std::string::npos)
    return make_error(load_errc::header, "", "header is not valid JSON (it contains a NUL byte)");

  // Parse without exceptions; a callback records the first duplicate key at
  // any depth (nlohmann itself would silently keep the last one), with the
  // key path above it: a duplicate tensor name (depth 1), a key repeated in a
  // tensor's entry or in __metadata__ (depth 2, reported under that name).
  struct object_keys {
    std::set<std::string> seen;
    std::string last;  ///< the most recent key: the name of a nested object
  };
  std::vector<object_keys> keys_stack;
  std::string duplicate, duplicate_owner;
  std::size_t duplicate_depth = 0;
  const json::parser_callback_t cb = [&](int, json::parse_event_t ev, json& parsed) -> bool {
    switch (ev) {
      case json::parse_event_t::object_start: keys_stack.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!keys_stack.empty()) keys_stack.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys_stack.empty() && parsed.is_string()) {
          const auto& k = parsed.get_ref<const std::string&>();
          auto& level = keys_stack.back();
          if (!level.seen.insert(k).second && duplicate.empty()) {
            duplicate = k;
            duplicate_depth = keys_stack.size();
            if (keys_stack.size() >= 2) duplicate_owner = keys_stack[0].last;
          }
          level.last = k;
        }
        break;
      default: break;
    }
    return true;
  };
  const json header = json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/false);
  if (header.is_discarded()) return make_error(load_errc::header, "", "header is not valid JSON");
  if (!header.is_object())
    return make_error(load_errc::header, "", "header is a JSON " + json_type(header) + ", not an object");
  if (!duplicate.empty()) {
    if (duplicate_depth == 1)
      return make_error(load_errc::header, duplicate, "duplicate name '" + duplicate + "' in the header");
    if (duplicate_owner == "__metadata__")
      return make_error(load_errc::header, "", "duplicate key '" + duplicate + "' in __metadata__");
    return make_error(load_errc::header, duplicate_owner,
                      "duplicate key '" + duplicate + "' in the entry");
  }

  out = header_info{};
  out.data_start = 8 + n;
  out.data_size = file_size - 8 - n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object())
        return make_error(load_errc::header, "", "__metadata__ is a JSON " + json_type(v) + ", not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          return make_error(load_errc::header, "",
                            "__metadata__ value of '" + m.key() + "' is a JSON " +
                                json_type(m.value()) + ", not a string");
        out.metadata.emplace_back(m.key(), m.value().get_ref<const std::string&>());
      }
      continue;
    }
    if (!v.is_object())
      return make_error(load_errc::header, name, "entry is a JSON " + json_type(v) + ", not an object");
    const auto dt = v.find("dtype");
    const auto sh = v.find("shape");
    const auto off = v.find("data_offsets");
    if (dt == v.end()) return make_error(load_errc::header, name, "entry has no 'dtype'");
    if (sh == v.end()) return make_error(load_errc::header, name, "entry has no 'shape'");
    if (off == v.end()) return make_error(load_errc::header, name, "entry has no 'data_offsets'");
    if (!dt->is_string())
      return make_error(load_errc::header, name, "'dtype' is a JSON " + json_type(*dt) + ", not a string");
    if (!sh->is_array())
      return make_error(load_errc::header, name, "'shape' is a JSON " + json_type(*sh) + ", not an array");
    if (!off->is_array())
      return make_error(load_errc::header, name,
                        "'data_offsets' is a JSON " + json_type(*off) + ", not an array");

    tensor_entry e;
    e.name = name;
    const std::string& dname = dt->get_ref<const std::string&>();
    const dtype_info* di = nullptr;
    for (const auto& i : dtype_table)
      if (dname == i.name) di = &i;
    if (di == nullptr) return make_error(load_errc::dtype, name, "unknown dtype '" + dname + "'");
    e.type = di->id;

    // The element count, and whether the product of the non-zero extents
    // overflows 64 bits: a shape is rejected for that whatever the position of
    // a zero extent (so [0][2^63][2^63] and [2^63][2^63][0] are treated alike).
    std::uint64_t count = 1, nonzero_product = 1;
    bool overflow = false, has_zero = false;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned())
        return make_error(load_errc::header, name,
                          "'shape' holds a " + std::string(d.is_number_integer() ? "negative number"
                                                                                 : "JSON " + json_type(d)) +
                              ", not a non-negative integer");
      const std::uint64_t x = d.get<std::uint64_t>();
      e.shape.push_back(x);
      if (x == 0) {
        has_zero = true;
        continue;
      }
      if (nonzero_product > std::numeric_limits<std::uint64_t>::max() / x) overflow = true;
      nonzero_product *= x;
    }
    count = has_zero ? 0 : nonzero_product;
    if (overflow || nonzero_product > std::numeric_limits<std::uint64_t>::max() / di->size)
      return make_error(load_errc::offsets, name,
                        "shape " + shape_text(e.shape) + " overflows 64 bits" +
                            (has_zero ? std::string(" (the product of its non-zero extents, in bytes)")
                                      : std::string(" (in bytes)")));
    e.count = count;

    if (off->size() != 2)
      return make_error(load_errc::header, name,
                        "'data_offsets' has " + std::to_string(off->size()) + " elements, not 2");
    for (const auto& d : *off)
      if (!d.is_number_unsigned())
        return make_error(load_errc::header, name, "'data_offsets' must hold two non-negative integers");
    e.begin = (*off)[0].get<std::uint64_t>();
    e.end = (*off)[1].get<std::uint64_t>();
    const std::string range = "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ")";
    if (e.end < e.begin) return make_error(load_errc::offsets, name, range + " is reversed");
    if (e.end > out.data_size)
      return make_error(load_errc::offsets, name,
                        range + " is out of range: the data section has " +
                            std::to_string(out.data_size) + " bytes");
    if (e.end - e.begin != count * di->size)
      return make_error(load_errc::offsets, name,
                        range + " holds " + std::to_string(e.end - e.begin) + " bytes, but dtype " +
                            dname + " with shape " + shape_text(e.shape) + " needs " +
                            std::to_string(count * di->size));
    out.tensors.push_back(std::move(e));
  }

  // The byte ranges must tile the data section: no overlap, no gap, nothing left over.
  std::vector<const tensor_entry*> by_offset;
  for (const auto& e : out.tensors) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const tensor_entry* a, const tensor_entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t covered = 0;
  const tensor_entry* prev = nullptr;
  for (const auto* e : by_offset) {
    if (e->begin < covered)
      return make_error(load_errc::offsets, e->name,
                        "data_offsets [" + std::to_string(e->begin) + ", " + std::to_string(e->end) +
                            ") overlap those of '" + (prev != nullptr ? prev->name : std::string()) +
                            "'");
    if (e->begin > covered)
      return make_error(load_errc::offsets, e->name,
                        "gap in the data section: bytes [" + std::to_string(covered) + ", " +
                            std::to_string(e->begin) + ") belong to no tensor");
    covered = e->end;
    prev = e;
  }
  if (covered != out.data_size)
    return make_error(load_errc::offsets, "",
                      "the tensors cover " + std::to_string(covered) + " of the " +
                          std::to_string(out.data_size) + " bytes of the data section");
  std::sort(out.tensors.begin(), out.tensors.end(),
            [](const tensor_entry& a, const tensor_entry& b) { return a.name < b.name; });
  return {};
}

/// `d` rounded to the nearest T. Beyond T's range (where a plain conversion is
/// undefined behaviour in C++) the IEEE result is produced explicitly: values
/// below max + half an ulp round to +-max, larger ones (and infinities) give
/// +-infinity.
template <class T>
T narrow(double d) noexcept {
  if constexpr (std::is_same_v<T, double>) {
    return d;
  } else {
    constexpr double max = static_cast<double>(std::numeric_limits<T>::max());
    if (std::isnan(d)) return std::numeric_limits<T>::quiet_NaN();
    const double a = std::fabs(d);
    if (a <= max) return static_cast<T>(d);
    // max + half an ulp of max (ties round to even, i.e. to infinity).
    const double limit = max + std::ldexp(1.0, std::numeric_limits<T>::max_exponent - 1 -
                                                   std::numeric_limits<T>::digits);
    const T r = a < limit ? std::numeric_limits<T>::max() : std::numeric_limits<T>::infinity();
    return d < 0 ? -r : r;
  }
}

/// Reads tensor `e` (a floating dtype) from `src` converted to T (round to
/// nearest) into `dst` (resized to e.count). Unless `allow_non_finite`, a NaN
/// or infinity in the file, or a finite value that overflows T, is an error.
template <class T>
error read_converted(byte_source& src, const header_info& h, const tensor_entry& e,
                     bool allow_non_finite, std::vector<T>& dst) {
  if (!is_float_dtype(e.type))
    return make_error(load_errc::dtype, e.name,
                      std::string("dtype ") + info_of(e.type).name +
                          " is not a floating-point dtype (expected F32, F64, F16 or BF16)");
  std::vector<unsigned char> raw(static_cast<std::size_t>(e.end - e.begin));
  if (!src.read(h.data_start + e.begin, e.end - e.begin, raw.data()))
    return make_error(load_errc::io, e.name, "read error in the data section");
  dst.resize(static_cast<std::size_t>(e.count));
  const unsigned char* p = raw.data();
  for (std::size_t i = 0; i < dst.size(); ++i) {
    bool source_finite = true;
    switch (e.type) {
      case dtype::F16: {
        const float f = ::mha::detail::f16_to_f32(load_le<std::uint16_t, 2>(p + 2 * i));
        source_finite = std::isfinite(f);
        dst[i] = static_cast<T>(f);
        break;
      }
      case dtype::BF16: {
        const float f = ::mha::detail::bf16_to_f32(load_le<std::uint16_t, 2>(p + 2 * i));
        source_finite = std::isfinite(f);
        dst[i] = static_cast<T>(f);
        break;
      }
      case dtype::F32: {
        const float f = std::bit_cast<float>(load_le<std::uint32_t, 4>(p + 4 * i));
        source_finite = std::isfinite(f);
        dst[i] = static_cast<T>(f);
        break;
      }
      default: {  // F64
        const double d = std::bit_cast<double>(load_le<std::uint64_t, 8>(p + 8 * i));
        source_finite = std::isfinite(d);
        dst[i] = narrow<T>(d);
        break;
      }
    }
    if (!allow_non_finite && !std::isfinite(dst[i]))
      return make_error(load_errc::non_finite, e.name,
                        "element " + std::to_string(i) + " is " +
                            (source_finite ? std::string("out of the model's floating-point range")
                                           : std::string(std::isnan(dst[i]) ? "NaN" : "infinite")) +
                            " (pass allow_non_finite to accept non-finite weights)");
  }
  return {};
}

/// Reads a BOOL/U8 or floating tensor as 0/1 flags (for the book's mask
/// buffer): flags[i] is 1 for a non-zero element. Other dtypes: error.
inline error read_flags(byte_source& src, const header_info& h, const tensor_entry& e,
                        std::vector<unsigned char>& flags) {
  if (e.type == dtype::BOOL || e.type == dtype::U8) {
    flags.resize(static_cast<std::size_t>(e.count));
    if (!src.read(h.data_start + e.begin, e.end - e.begin, flags.data()))
      return make_error(load_errc::io, e.name, "read error in the data section");
    for (auto& f : flags) f = f != 0 ? 1 : 0;
    return {};
  }
  std::vector<double> values;
  if (auto err = read_converted<double>(src, h, e, false, values)) return err;
  flags.resize(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] != 0.0 && values[i] != 1.0)
      return make_error(load_errc::mask, e.name,
                        "element " + std::to_string(i) + " is " +
                            mha::detail::number_text(values[i]) +
                            "; the causal mask holds only 0 and 1");
    flags[i] = values[i] != 0.0 ? 1 : 0;
  }
  return {};
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::io::detail

#include <mha/detail/macros_undef.hpp>
