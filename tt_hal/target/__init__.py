"""What a Tensix chip and its programs are, shared by every backend and the compiler:
arch presets (arch), device data formats and tensor layouts (layout), placement on
banks and cores (placement), host conversions (tiles, formats, conversions), the
kernel ISA (isa) and its builder, programs (program), how a dispatch's workgroups
become cores and runtime args (workgroups) and the .ttx executable format (ttx).
Imports nothing of the project but the status codes (hal.status)."""
