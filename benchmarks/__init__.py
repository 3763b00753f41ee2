"""Benchmarks (not tests): scripts that print a table and write JSON under results/."""
