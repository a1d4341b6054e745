-- orders: who placed each funded order the book was given, and for which GPU (the engine's
-- order updates name neither; status events name both). A row also marks the order as given
-- to the book, so a redelivered order.funded is not placed twice.
CREATE TABLE orders (
    order_id text PRIMARY KEY,
    buyer_id text NOT NULL,
    gpu      text NOT NULL
);
