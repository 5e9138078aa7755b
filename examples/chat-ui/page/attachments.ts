/**
 * What the page may attach to a message: the server's body limit is set from these (server.ts), so
 * a file the page accepts is never refused for its size.
 */

/**
 * The media types the page attaches: the images every wire takes and PDFs (docs/rich-content.md,
 * "Which wire takes what"). Another image type would be refused by the model's wire after sending.
 */
export const attachmentTypes = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf'] as const;

/** The most a message's attachments may weigh, all together: 4 MiB. */
export const maxAttachmentBytes = 4 * 1024 * 1024;
