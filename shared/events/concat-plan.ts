/**
 * Plans an S3 object made of other objects and small strings as a multipart upload: large stretches become
 * UploadPartCopy parts (copied inside S3), small pieces are joined into uploaded parts, within S3's part limits. Pure.
 */

/** S3's smallest part (all parts but the last). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** S3's largest part. */
export const MAX_PART_BYTES = 5 * 1024 * 1024 * 1024;

/** A piece of the object to write: a string, or a whole stored object of `size` bytes. */
export type ConcatPiece = { text: string } | { key: string; size: number };
/** Bytes `start` (inclusive) to `end` (exclusive) of a stored object, or a string. */
export type PartSegment = { text: string } | { key: string; start: number; end: number };
/** One part: a range copied inside S3, or segments read and uploaded together. */
export type ConcatPart = { copy: { key: string; start: number; end: number }; size: number } | { segments: PartSegment[]; size: number };

/**
 * The parts of the concatenation of `pieces`, in order. Uploaded parts hold
 * less than twice `minPart` bytes, so joining them takes little memory; a
 * piece that follows a small pending part first tops it up to `minPart`
 * (a ranged read), and the rest of it is copied when it is large enough.
 */
export function planConcat(pieces: ConcatPiece[], { minPart = MIN_PART_BYTES, maxPart = MAX_PART_BYTES }: { minPart?: number; maxPart?: number } = {}): ConcatPart[] {
  const parts: ConcatPart[] = [];
  let pending: PartSegment[] = [];
  let size = 0;
  const flush = () => {
    if (size > 0) parts.push({ segments: pending, size });
    pending = [];
    size = 0;
  };
  const add = (segment: PartSegment, bytes: number) => {
    pending.push(segment);
    size += bytes;
    if (size >= minPart) flush();
  };
  for (const piece of pieces) {
    if ('text' in piece) {
      const bytes = Buffer.byteLength(piece.text);
      if (bytes > 0) add(piece, bytes);
      continue;
    }
    let at = 0;
    if (size > 0 && piece.size > 0) {
      at = Math.min(piece.size, minPart - size);
      add({ key: piece.key, start: 0, end: at }, at);
    }
    // Here nothing is pending, or the piece is used up.
    while (piece.size - at >= minPart) {
      const bytes = Math.min(piece.size - at, maxPart);
      parts.push({ copy: { key: piece.key, start: at, end: at + bytes }, size: bytes });
      at += bytes;
    }
    if (at < piece.size) add({ key: piece.key, start: at, end: piece.size }, piece.size - at);
  }
  flush();
  if (parts.length > 10_000) throw new Error(`A concatenation of ${parts.length} parts is more than S3's 10,000`);
  return parts;
}
