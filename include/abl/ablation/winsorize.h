// Symmetric winsorization of a residual (DESIGN.md §1.1): clamp every component to ±the
// q-quantile of the absolute components (linear interpolation, as torch.quantile); q >= 1 is off.
#pragma once
#include <cstdint>

namespace abl::ablation {

void winsorize(float* x, int64_t n, double q);

}  // namespace abl::ablation
