# SPDX-License-Identifier: Apache-2.0
"""The archive a facility really has: an aged history under a memory budget and a storage class.

`records` holds what a run writes about it (history, load-order and growth records, each server's
memory budget and storage read back from the kernel); the parts that produce them live beside it.
"""
