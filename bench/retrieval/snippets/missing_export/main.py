from billing.tax import compute_vat

print(compute_vat(100.0))
