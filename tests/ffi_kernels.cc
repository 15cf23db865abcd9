// FFI handlers that tests/test_ffi.py builds into a shared library and calls through
// spmdc.ffi.ffi_call, written against the XLA FFI headers jaxlib ships
// (spmdc.ffi.include_dir()).
#include <cmath>
#include <cstdint>
#include <atomic>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// y = x / sqrt(mean(x^2 over the last axis) + eps), for every row of x.
static ffi::Error RmsNormImpl(float eps, ffi::Buffer<ffi::F32> x,
                              ffi::ResultBuffer<ffi::F32> y) {
  auto dims = x.dimensions();
  if (dims.size() == 0) {
    return ffi::Error::InvalidArgument("rms_norm: x must have at least one axis");
  }
  int64_t n = dims.back();
  int64_t rows = n == 0 ? 0 : static_cast<int64_t>(x.element_count()) / n;
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum += in[r * n + i] * in[r * n + i];
    float scale = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
    for (int64_t i = 0; i < n; ++i) out[r * n + i] = in[r * n + i] * scale;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNorm, RmsNormImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// (a * k + b, running count of calls): two operands, an int attribute, two results, and a
// side effect (the count) that tells whether XLA kept or dropped the call.
static std::atomic<int32_t> calls{0};

static ffi::Error AffineCountImpl(int64_t k, ffi::Buffer<ffi::S32> a,
                                  ffi::Buffer<ffi::S32> b,
                                  ffi::ResultBuffer<ffi::S32> out,
                                  ffi::ResultBuffer<ffi::S32> count) {
  int64_t n = static_cast<int64_t>(a.element_count());
  for (int64_t i = 0; i < n; ++i) {
    out->typed_data()[i] = static_cast<int32_t>(a.typed_data()[i] * k + b.typed_data()[i]);
  }
  count->typed_data()[0] = ++calls;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(AffineCount, AffineCountImpl,
                              ffi::Ffi::Bind()
                                  .Attr<int64_t>("k")
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());

extern "C" int32_t affine_count_calls() { return calls.load(); }

// A type id for handlers' state, which register_ffi_type gives its value.
extern "C" XLA_FFI_TypeId spmdc_test_state_type_id = XLA_FFI_UNKNOWN_TYPE_ID;
