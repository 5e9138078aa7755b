/**
 * The service's tools, over an in-memory stand-in for your order system (it starts afresh with
 * each process; in your service these would call your database or API).
 *
 * - `lookup_order` only reads: `idempotent: true`, so a call interrupted by a restart runs again.
 * - `issue_refund` moves money: not idempotent (a call a crash interrupted is reported to the model
 *   as interrupted, never run twice), and a refund over €50 waits for a person's approval.
 */
import { defineTool } from 'actorloop';
import { z } from 'zod';

type Order = { item: string; amountEur: number; refunded: boolean };

export function orderTools() {
  const orders = new Map<string, Order>([
    ['A-1', { item: 'a punched-card reader', amountEur: 20, refunded: false }],
    ['B-7', { item: 'a brass gear set', amountEur: 80, refunded: false }],
    ['C-3', { item: 'an analytical engine manual', amountEur: 480, refunded: false }],
  ]);
  const find = (orderId: string) => {
    const order = orders.get(orderId);
    if (!order) throw new Error(`no order ${orderId} (known: ${[...orders.keys()].join(', ')})`);
    return order;
  };

  const lookupOrder = defineTool({
    name: 'lookup_order',
    description: 'Look an order up by its id (like A-1): what was bought, its amount in euros, whether it was refunded',
    parameters: z.object({ orderId: z.string().describe('The order id, like A-1') }),
    idempotent: true,
    execute: ({ orderId }) => ({ orderId, ...find(orderId) }),
  });

  const issueRefund = defineTool({
    name: 'issue_refund',
    description: 'Refund an order in full. Refunds over €50 wait for a person to approve them.',
    parameters: z.object({ orderId: z.string().describe('The order id, like A-1') }),
    needsApproval: ({ orderId }) => (orders.get(orderId)?.amountEur ?? Number.POSITIVE_INFINITY) > 50,
    execute: ({ orderId }) => {
      const order = find(orderId);
      if (order.refunded) throw new Error(`order ${orderId} is already refunded`);
      order.refunded = true;
      return `refunded order ${orderId}: €${order.amountEur}`;
    },
  });

  return [lookupOrder, issueRefund];
}
