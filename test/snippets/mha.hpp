// Prelude "mha" of the documentation snippets (check_snippets.py): the umbrella
// header and <memory> (std::make_unique), for fragments that show a few lines.
#include <mha/mha.hpp>

#include <memory>
