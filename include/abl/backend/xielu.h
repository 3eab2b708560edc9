// xIELU, Apertus' learned activation (transformers' XIELUActivation, _xielu_python): the argument of both
// twins of xielu (cpu/ops.h, cuda/ops.h). Each layer's MLP stores four scalars, mlp.act_fn.alpha_p and alpha_n
// (shape (1,), before their softplus), beta and eps (0-d buffers); with ap = softplus(alpha_p) and
// an = beta + softplus(alpha_n),
//   xIELU(x) = ap·x·x + beta·x                          for x > 0,
//              (expm1(min(x, eps)) − x)·an + beta·x     otherwise,
// softplus(v) = log1p(exp(v)), v itself above 20 (torch's threshold).
#pragma once

namespace abl {

struct XieluParams {  // one fp32 value each, in the memory of the op's device (host for the CPU twin)
  const float* alpha_p = nullptr;
  const float* alpha_n = nullptr;
  const float* beta = nullptr;
  const float* eps = nullptr;
  bool present() const { return alpha_p && alpha_n && beta && eps; }
};

}  // namespace abl
