# The batch self-test's cases (selftest.cmake), in the format of ../cases.cmake.
set(MHA_COMPILE_FAIL_CASES
  "shared_first|mha::causal_attention: DOut must be greater than 0"
  "victim|mha::multi_head_attention_wrapper: NumHeads must be greater than 0"
  "shared_last|mha::causal_attention: DOut must be greater than 0"
)
