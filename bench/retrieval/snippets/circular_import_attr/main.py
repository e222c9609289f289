import billing.invoices

print(billing.invoices.render_invoice(42))
