"""capture: boot a guest in QEMU (fresh or from a snapshot) and write its serial console to a file."""
