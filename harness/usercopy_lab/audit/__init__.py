"""audit: the whitelist audit: each slab cache's usercopy region as the guest reports it, checked against the spec and the compiled layout (DWARF or a compiled unit)."""
