/**
 * One skill an agent card advertises: what a client may ask the agent for.
 *
 * @example
 * ```ts
 * const skill: A2ASkill = { id: 'orders', name: 'Order status', description: 'Looks up an order and says where it is.', tags: ['orders'] };
 * ```
 */
export type A2ASkill = {
  id: string;
  name: string;
  description: string;
  tags?: string[];
  /** Example requests, as a client would send them. */
  examples?: string[];
};

/**
 * What the agent card (`/.well-known/agent-card.json`) says of the agent. The protocol parts —
 * the JSON-RPC interface, protocol version 1.0, streaming, the input and output modes — are
 * filled in by `createA2AHandler`.
 *
 * @example
 * ```ts
 * const card: A2ACardOptions = {
 *   name: 'Order desk',
 *   description: 'Answers questions about orders.',
 *   version: '1.0.0',
 *   skills: [{ id: 'orders', name: 'Order status', description: 'Where an order is.' }],
 * };
 * ```
 */
export type A2ACardOptions = {
  name: string;
  description: string;
  /** The agent's own version (not the protocol's). */
  version: string;
  /** Default: one skill named after the agent. */
  skills?: A2ASkill[];
  /**
   * The absolute URL clients send JSON-RPC to (behind a proxy, the public one). Default: the
   * origin the card was requested on, followed by `basePath`.
   */
  url?: string;
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  /**
   * The card's `securitySchemes` and `securityRequirements`, as the A2A spec writes them (e.g.
   * `{ bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } }` and `[{ schemes: { bearer: { list: [] } } }]`):
   * how clients learn what `authorize` expects. Default: none.
   */
  securitySchemes?: Record<string, unknown>;
  securityRequirements?: unknown[];
};

/** The agent card as JSON (the A2A 1.0 JSON form of `AgentCard`), for the JSON-RPC endpoint at `url`. */
export function agentCardJson(card: A2ACardOptions, url: string): Record<string, unknown> {
  const skills = card.skills ?? [{ id: 'conversation', name: card.name, description: card.description }];
  return {
    name: card.name,
    description: card.description,
    version: card.version,
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain'],
    skills: skills.map((skill) => ({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      tags: skill.tags ?? [],
      examples: skill.examples ?? [],
    })),
    ...(card.provider ? { provider: card.provider } : {}),
    ...(card.documentationUrl ? { documentationUrl: card.documentationUrl } : {}),
    ...(card.iconUrl ? { iconUrl: card.iconUrl } : {}),
    ...(card.securitySchemes ? { securitySchemes: card.securitySchemes } : {}),
    ...(card.securityRequirements ? { securityRequirements: card.securityRequirements } : {}),
  };
}
