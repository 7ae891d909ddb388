"""The static gap finder (make gaps, docs/gaps.md): which copy sites can
point into which slab cache's objects, and do they stay in its region.

caches (create calls) -> sites (copy calls) -> match (sites x caches)
-> report (gaps.json, gaps.md); csource and structs read C, copyfuncs is
the table of copy functions, allocators the table of allocators, model
the types they share, command the entry point (usercopy-lab gaps).
"""
