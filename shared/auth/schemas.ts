import * as v from 'valibot';

export const TokenQuerySchema = v.object({
  username: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  password: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
});

export const TokenSchema = v.object({ token: v.string() });
