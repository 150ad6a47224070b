"""What makes a start fast, and nothing else: the findings cache, its segment snapshots, the kept
listing of the store's folders, the recall index's seals and the remembered handshake.

Every cache here judges a file unchanged by one rule (`store/freshness.py`) and can be deleted at any
time: the product then reads and checks the store again, only slower. No rule of the product lives here.
"""
