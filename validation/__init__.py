"""Real-GPU validation kit: the saxpy2 harness of 000 section 6 and its analysis (issue 4 item 10)."""
