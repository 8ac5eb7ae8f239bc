// The one strtk call fstalign makes (src/SynonymEngine.cpp: strtk::split into a vector of
// strings, delimiters compressed), so that fstalign builds without the strtk submodule, which
// has no Debian package. Same tokens as strtk's split (strtk.hpp, `split` with a delimiter
// predicate): a leading delimiter gives an empty first token, a run of delimiters counts as one
// with compress_delimiters, and a trailing delimiter gives an empty last token.
#ifndef ASRBENCH_STRTK_SHIM_HPP
#define ASRBENCH_STRTK_SHIM_HPP

#include <cstddef>
#include <string>
#include <vector>

namespace strtk {

namespace split_options {
typedef std::size_t type;
enum { default_mode = 0, compress_delimiters = 1 };
}  // namespace split_options

struct string_back_inserter {
  std::vector<std::string>* out;
  void push(const std::string& token) const { out->push_back(token); }
};

inline string_back_inserter range_to_type_back_inserter(std::vector<std::string>& out) {
  return string_back_inserter{&out};
}

inline std::size_t split(const std::string& delimiters, const std::string& text,
                         string_back_inserter out,
                         split_options::type option = split_options::default_mode) {
  if (text.empty()) return 0;
  const bool compress = (option & split_options::compress_delimiters) != 0;
  auto is_delimiter = [&delimiters](char c) { return delimiters.find(c) != std::string::npos; };
  std::size_t count = 0, first = 0, pos = 0, end = text.size();
  while (pos != end) {
    if (is_delimiter(text[pos])) {
      out.push(text.substr(first, pos - first));
      ++count;
      ++pos;
      if (compress)
        while (pos != end && is_delimiter(text[pos])) ++pos;
      first = pos;
    } else {
      ++pos;
    }
  }
  if (first != pos || is_delimiter(text[pos - 1])) {
    out.push(text.substr(first, pos - first));
    ++count;
  }
  return count;
}

}  // namespace strtk

#endif
