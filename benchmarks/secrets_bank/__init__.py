"""A corpus of made-up secrets in realistic text, and of look-alikes that are not secrets.

``held_out`` was written before the redactor's patterns and is measured once, at the end;
``tuning`` was written with them. ``python -m benchmarks.secrets_rates`` measures both.
"""
