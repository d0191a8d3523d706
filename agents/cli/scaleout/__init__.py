"""Scale-out: a batch of scenarios fanned out as Ray tasks across nodes (optional extra `codeduet[ray]`)."""
