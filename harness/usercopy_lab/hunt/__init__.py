"""hunt: fuzz/stress workloads in fallback guests, their findings and reach."""
