"""The application layer: commands and queries over the stores, their request and result types, permissions."""
