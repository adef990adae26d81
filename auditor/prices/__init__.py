"""Prices from AWS's own price list: parsing (Price List API answers, bulk offer files), the
versioned cache in the user's data directory, and merging them into the instance catalog.

Everything here is pure or file-only; the API calls are in `auditor.collect.pricing`.
"""
