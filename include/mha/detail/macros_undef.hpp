// mha/detail/macros_undef.hpp -- removes the internal macros of
// <mha/detail/macros.hpp> (no include guard; included at the end of every
// header that includes it).
#undef MHA_DETAIL_INLINE
#undef MHA_DETAIL_LAMBDA_INLINE
#undef MHA_DETAIL_MAX_INLINE_BYTES
#undef MHA_DETAIL_HAVE_SHUFFLEVECTOR
#undef MHA_IO_HAVE_DYNAMIC
#undef MHA_DETAIL_ISA
#undef MHA_DETAIL_ISA_NAME
#undef MHA_DETAIL_ISA_TAG
#undef MHA_DETAIL_ISA_NAMESPACE
#undef MHA_DETAIL_FMA_FLOAT
#undef MHA_DETAIL_FMA_DOUBLE
