"""The simulated SGLang server: SGLang's launch flags, HTTP API and failure modes, timed by a
performance model calibrated to the article. The tuner talks to it only over HTTP and its command
line, exactly as to SGLang."""
