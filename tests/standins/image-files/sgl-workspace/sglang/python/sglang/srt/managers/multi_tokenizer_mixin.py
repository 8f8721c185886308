# Stand-in for the SGLang image's file of this name (tests/standins of ci-tools): only the lines recipes read.
# InferenceX's Qwen3.5 FP8 agentic MTP recipes look in the BatchStrOutput branch below for
# cached_tokens_details and add it after cached_tokens with sed -i when it is missing.
def _handle_output_by_index(output, i):
    if isinstance(output, BatchTokenIDOutput):
        pass
    elif isinstance(output, BatchStrOutput):
        new_output = BatchStrOutput(
            rids=[output.rids[i]],
            cached_tokens=_extract_field_by_index(output, "cached_tokens", i),
            input_token_logprobs_val=_extract_field_by_index(output, "input_token_logprobs_val", i),
        )
    return new_output
