#include "abl/engine/backend.h"

namespace abl::engine {

std::string_view backend_kind_name(BackendKind k) { return k == BackendKind::cuda ? "cuda" : "cpu"; }

}  // namespace abl::engine
