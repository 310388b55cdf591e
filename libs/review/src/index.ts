// Public surface of @rolepolicy/review.
export {};
