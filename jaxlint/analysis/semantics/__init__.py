"""What libraries do: the table of APIs (`library`) and the parts it re-exports, data only."""
