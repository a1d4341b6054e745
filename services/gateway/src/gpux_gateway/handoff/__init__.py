"""The access handoff: a lease's seller posts how to reach the machines (sealed), its buyer
reads them; the seller's reports of a lease ready or failed go to billing."""
